package audit

import "testing"

func TestCloseMessage(t *testing.T) {
	for _, tc := range []struct {
		s    Stats
		want string
	}{
		{Stats{}, "toolmw/audit: writer closed: 0 rows written to the store, none lost"},
		{Stats{Written: 1}, "toolmw/audit: writer closed: 1 row written to the store, none lost"},
		{Stats{Written: 28, Replayed: 3, Retried: 4, Spooled: 3}, "toolmw/audit: writer closed: 28 rows written to the store (3 of them from the spool), none lost"},
		{Stats{Written: 5, SpoolRows: 7}, "toolmw/audit: writer closed: 5 rows written to the store, 7 rows wait in the spool for the next start, none lost"},
		{Stats{Written: 5, Fallback: 2}, "toolmw/audit: writer closed: 5 rows written to the store, 2 rows went to the fallback log instead"},
		{Stats{Written: 5, Fallback: 2, Dropped: 1}, "toolmw/audit: writer closed: 5 rows written to the store, 2 rows went to the fallback log instead, 1 row lost"},
	} {
		if got := tc.s.closeMessage(); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.s, got, tc.want)
		}
	}
}
