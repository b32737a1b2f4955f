package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pairedLines writes bursts of the four arms, toolmw at tm × bare and own
// at own × bare, with the bare level drifting from burst to burst (as the
// machine's load moves) and bare2 within ±jitter of bare.
func pairedLines(cs string, bursts int, own, tm, jitter float64) string {
	var b strings.Builder
	for i := range bursts {
		base := 100000 * (1 + 0.2*float64(i%5)) // the drift the pairing must cancel
		j := jitter
		if i%2 == 1 {
			j = -jitter
		}
		for _, a := range []struct {
			arm string
			v   float64
		}{{"bare", base}, {"bare2", base * (1 + j)}, {"own", base * own}, {"toolmw", base * tm}} {
			fmt.Fprintf(&b, "Paired/%s burst=%d arm=%s cpu-ns/op=%.1f\n", cs, i, a.arm, a.v)
		}
	}
	return b.String()
}

func TestPairedRatiosAreTakenWithinABurst(t *testing.T) {
	pr, err := parsePaired(strings.NewReader(pairedLines("sdk-in-memory", 20, 1.10, 1.01, 0.002)))
	require.NoError(t, err)
	c := judgePaired("sdk-in-memory", pr.cpu["sdk-in-memory"])
	assert.Equal(t, 20, c.bursts)
	// The bare level moves by 80% across bursts; the ratios must not.
	assert.InDelta(t, 1.01, c.toolmw.mean, 0.003, "toolmw / bare is taken per burst")
	assert.Less(t, c.toolmw.width(), 0.01, "drift between bursts does not widen a paired interval")
	assert.Less(t, c.aa.width(), 0.015, "A/A of a 0.2%% jitter")
	assert.Equal(t, verdictMet, c.bareVerdict, "1.01 with a narrow A/A is within 1.03")
	assert.Equal(t, verdictMet, c.ownVer, "1.01 is below own mw's 1.10")

	pr, err = parsePaired(strings.NewReader(pairedLines("mcpgo-http", 20, 1.02, 1.08, 0.002)))
	require.NoError(t, err)
	c = judgePaired("mcpgo-http", pr.cpu["mcpgo-http"])
	assert.Equal(t, verdictMissed, c.bareVerdict, "1.08 is over 1.03")
	assert.Equal(t, verdictMissed, c.ownVer, "1.08 is above own mw's 1.02")
}

func TestPairedWideControlIsInconclusive(t *testing.T) {
	pr, err := parsePaired(strings.NewReader(pairedLines("sdk-http", 10, 1.05, 1.02, 0.05)))
	require.NoError(t, err)
	c := judgePaired("sdk-http", pr.cpu["sdk-http"])
	assert.Contains(t, c.bareVerdict, verdictInconclusive, "a 5%% A/A jitter cannot decide 1.02 against 1.03")
}

func TestPairedDropsIncompleteBursts(t *testing.T) {
	in := pairedLines("sdk-in-memory", 3, 1.1, 1.0, 0.001) +
		"Paired/sdk-in-memory burst=3 arm=bare cpu-ns/op=1000\n" // a run cut short
	pr, err := parsePaired(strings.NewReader(in))
	require.NoError(t, err)
	assert.Len(t, pr.cpu["sdk-in-memory"]["bare"], 3, "the burst without its other arms is dropped")
	assert.Len(t, pr.cpu["sdk-in-memory"]["toolmw"], 3)
}

func TestPairedRejectsMalformedLines(t *testing.T) {
	for _, in := range []string{
		"Paired/x burst=0 arm=bare\n",
		"Paired/x burst=0 arm=bare cpu-ns/op=abc\n",
		"Paired/x burst=0 arm=bare cpu-ns/op=-3\n",
		"Benchmark burst=0 arm=bare cpu-ns/op=3\n",
	} {
		_, err := parsePaired(strings.NewReader(in))
		assert.Error(t, err, "%q", in)
		if err != nil {
			assert.Contains(t, err.Error(), "line 1", "the error names the line of %q", in)
		}
	}
}

func TestPairedSectionInReport(t *testing.T) {
	r := parse(strings.NewReader(""))
	var err error
	r.paired, err = parsePaired(strings.NewReader(pairedLines("mcpgo-in-process", 12, 1.05, 1.01, 0.001)))
	require.NoError(t, err)
	page := render(r, meta{}, nil, "")
	assert.Contains(t, page, "### Paired processes")
	assert.Contains(t, page, "| mcp-go in-process | 12 |", "one row per case with its burst count")
}
