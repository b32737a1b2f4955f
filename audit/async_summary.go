package audit

import (
	"fmt"
	"strings"
)

// closeMessage is the message of the line an Async logs when it is
// closed: what became of the rows, in words, before the counters. The
// counters follow it as attributes (see [Stats]).
func (s Stats) closeMessage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "toolmw/audit: writer closed: %s written to the store", rows(s.Written))
	if s.Replayed > 0 {
		fmt.Fprintf(&b, " (%d of them from the spool)", s.Replayed)
	}
	if waiting := uint64(s.SpoolRows) + uint64(s.Queued); waiting > 0 {
		fmt.Fprintf(&b, ", %s wait in the spool for the next start", rows(waiting))
	}
	if s.Fallback > 0 {
		fmt.Fprintf(&b, ", %s went to the fallback log instead", rows(s.Fallback))
	}
	if s.NotDurable > 0 {
		fmt.Fprintf(&b, ", %s answered before they were durable (DurabilityDisk)", rows(s.NotDurable))
	}
	if s.Dropped > 0 {
		fmt.Fprintf(&b, ", %s lost", rows(s.Dropped))
	} else if s.Fallback == 0 {
		b.WriteString(", none lost")
	}
	return b.String()
}

func rows(n uint64) string {
	if n == 1 {
		return "1 row"
	}
	return fmt.Sprintf("%d rows", n)
}
