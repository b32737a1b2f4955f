package toolmwtest

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// Finding is one thing a client received that it must not have.
type Finding struct {
	// What names the rule broken: "canary", "canary prefix", "Go stack"
	// or "source path".
	What string
	// Match is the offending text.
	Match string
	// Offset is where Match starts in the scanned bytes.
	Offset int
	// Context is the bytes around the match, with the match between » and «.
	Context string
}

// String renders the finding for a test failure.
func (f Finding) String() string {
	return fmt.Sprintf("%s at byte %d: %s", f.What, f.Offset, f.Context)
}

// The markers of a Go stack trace or a source location: a goroutine header,
// a frame's "file.go:line", the panic machinery's own frames.
var (
	goroutineHeader = regexp.MustCompile(`goroutine \d+ \[`)
	sourceLine      = regexp.MustCompile(`[\w.\-@/\\]+\.go:\d+`)
	stackFrames     = []string{"runtime/debug.Stack", "runtime.gopanic", "runtime/panic.go", "panic({"}
)

// Scan returns every canary of canaries, every text that starts like a
// canary ([CanaryPrefix]), every Go stack marker and every source path with a
// line number found in b.
func Scan(b []byte, canaries []string) []Finding {
	var out []Finding
	seen := map[int]bool{} // a canary's own prefix is not a second finding
	for _, c := range canaries {
		for _, i := range indexAll(b, []byte(c)) {
			seen[i] = true
			out = append(out, finding(b, "canary", i, len(c)))
		}
	}
	for _, i := range indexAll(b, []byte(CanaryPrefix)) {
		if !seen[i] {
			out = append(out, finding(b, "canary prefix", i, len(CanaryPrefix)))
		}
	}
	for _, loc := range goroutineHeader.FindAllIndex(b, -1) {
		out = append(out, finding(b, "Go stack", loc[0], loc[1]-loc[0]))
	}
	for _, m := range stackFrames {
		for _, i := range indexAll(b, []byte(m)) {
			out = append(out, finding(b, "Go stack", i, len(m)))
		}
	}
	for _, loc := range sourceLine.FindAllIndex(b, -1) {
		out = append(out, finding(b, "source path", loc[0], loc[1]-loc[0]))
	}
	return out
}

func indexAll(b, sub []byte) []int {
	var out []int
	for off := 0; ; {
		i := bytes.Index(b[off:], sub)
		if i < 0 {
			return out
		}
		out = append(out, off+i)
		off += i + len(sub)
	}
}

// finding builds a Finding with up to 60 bytes of context on each side.
func finding(b []byte, what string, at, n int) Finding {
	const around = 60
	lo, hi := max(0, at-around), min(len(b), at+n+around)
	var ctx strings.Builder
	ctx.WriteString(printable(b[lo:at]))
	ctx.WriteString("»")
	ctx.WriteString(printable(b[at : at+n]))
	ctx.WriteString("«")
	ctx.WriteString(printable(b[at+n : hi]))
	return Finding{What: what, Match: string(b[at : at+n]), Offset: at, Context: ctx.String()}
}

// printable quotes control bytes so that a report stays on one line.
func printable(b []byte) string {
	q := fmt.Sprintf("%q", b)
	return q[1 : len(q)-1]
}
