package hostileframes

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
)

// RandomJSON is a valid JSON value, nested up to depth, with numbers of
// every magnitude and form (some beyond float64's range, exponents with
// and without a sign), strings holding number-like text, quotes and
// escapes, and object keys with escaped quotes: the values a frame
// guard's fast path must judge as its SDK's decoder does.
func RandomJSON(r *rand.Rand, depth int) string {
	switch k := r.IntN(8); {
	case depth == 0 || k == 0:
		mant := r.IntN(100000) - 50000
		switch r.IntN(4) {
		case 0:
			return fmt.Sprint(mant)
		case 1:
			return fmt.Sprintf("%d.%de%d", mant, r.IntN(1000), r.IntN(700)-350)
		case 2:
			return fmt.Sprintf("%dE+%d", mant, r.IntN(400))
		default:
			return strings.Repeat("9", 1+r.IntN(400))
		}
	case k == 1:
		b, _ := json.Marshal(fmt.Sprintf(`%de999 "\ %d`, r.IntN(10), r.IntN(10)))
		return string(b)
	case k == 2:
		return []string{`"a\"b\\u00e9"`, `"\u00e9\ud83d\ude00"`, `""`}[r.IntN(3)]
	case k == 3:
		return []string{"true", "false", "null"}[r.IntN(3)]
	case k <= 5:
		parts := make([]string, r.IntN(4))
		for i := range parts {
			parts[i] = RandomJSON(r, depth-1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		parts := make([]string, r.IntN(4))
		for i := range parts {
			parts[i] = fmt.Sprintf(`"k%d\"":%s`, i, RandomJSON(r, depth-1))
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
}
