//go:build race

package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGuardWithoutRaceDetector runs the regression guard once more in a
// test binary built without the race detector, where allocation counts are
// exact and the budgets close: under -race sync.Pool drops items at random,
// so the guard's slack there is wide. It lets the README's one test command
// (go test -race ./...) hold the close budgets too. Without -race this file
// is not built: the Guard tests themselves are the close check.
func TestGuardWithoutRaceDetector(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the guard's close budgets need a second build of this package without the race detector")
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goTool); err != nil {
		p, lookErr := exec.LookPath("go")
		require.NoError(t, lookErr, "the go command is needed to build the guard without the race detector (not at %s: %v)", goTool, err)
		goTool = p
	}
	cmd := exec.Command(goTool, "test", "-count=1", "-run", "^TestGuard", ".")
	// GOFLAGS may carry -race (or -count) from the parent's environment;
	// the child is the build without it.
	cmd.Env = append(os.Environ(), "GOFLAGS=")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the regression guard without the race detector failed:\n%s", out)
	t.Logf("without the race detector: %s", out)
}
