package docs

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/toolmw/toolmw/"

// TestImportsPointOneWay holds the layering of docs/README.md ("Packages
// and layering") and the design: errs <- toolctx <- toolctx/adapter <- the
// adapters; toolctx and toolctx/adapter <- middleware <- middleware/httpmw
// <- audit (and otelmw, redisstore) <- serve, examples and cmd; only those,
// the test kits and bench import an adapter; internal/ holds ground helpers
// that import nothing of toolmw outside internal/; a user who imports
// middleware builds no SDK, database driver, Redis client or OpenTelemetry,
// and one who imports audit builds no SDK, driver or OpenTelemetry. It reads
// each package's transitive imports (not its tests') from go list.
func TestImportsPointOneWay(t *testing.T) {
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Deps \" \"}}", "./...")
	cmd.Dir = ".."
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	deps := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || !strings.HasPrefix(fields[0], module) {
			continue
		}
		deps[strings.TrimPrefix(fields[0], module)] = fields[1:]
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(deps) < 30 {
		t.Fatalf("go list gave only %d packages of the module: the listing is wrong\n%s", len(deps), out)
	}

	// The listing must name external modules too, or the last rule
	// checks nothing.
	if !slices.ContainsFunc(deps["toolctx/mcpsdk"], func(d string) bool { return strings.HasPrefix(d, "github.com/modelcontextprotocol/go-sdk/") }) {
		t.Fatalf("toolctx/mcpsdk's listed imports lack the go-sdk: the listing is wrong\n%v", deps["toolctx/mcpsdk"])
	}

	own := func(pkg string) []string { // pkg's transitive imports within the module
		var in []string
		for _, d := range deps[pkg] {
			if rel, ok := strings.CutPrefix(d, module); ok {
				in = append(in, rel)
			}
		}
		return in
	}
	under := func(pkg, tree string) bool { return pkg == tree || strings.HasPrefix(pkg, tree+"/") }
	// only: pkg reaches no package of the module outside allowed, each a
	// package or, ending in "/...", a tree.
	only := func(pkg string, allowed ...string) {
		t.Helper()
		for _, d := range own(pkg) {
			if !slices.ContainsFunc(allowed, func(a string) bool {
				tree, ok := strings.CutSuffix(a, "/...")
				return d == a || ok && under(d, tree)
			}) {
				t.Errorf("%s imports %s (directly or not): it may reach only %v", pkg, d, allowed)
			}
		}
	}
	for pkg := range deps {
		switch {
		case under(pkg, "internal"):
			only(pkg, "internal/...")
		case pkg == "errs":
			only(pkg, "internal/...")
		case pkg == "toolctx":
			only(pkg, "internal/...", "errs")
		case pkg == "toolctx/adapter", pkg == "toolctx/mcpsdk", pkg == "toolctx/mcpgo":
			only(pkg, "internal/...", "errs", "toolctx", "toolctx/adapter")
		case pkg == "middleware", pkg == "middleware/httpmw":
			only(pkg, "internal/...", "errs", "toolctx", "toolctx/adapter", "middleware")
		case pkg == "middleware/otelmw", pkg == "middleware/redisstore":
			only(pkg, "internal/...", "errs", "toolctx", "toolctx/adapter", "middleware", "middleware/httpmw")
		case pkg == "audit":
			only(pkg, "internal/...", "errs", "toolctx", "toolctx/adapter", "middleware", "middleware/httpmw")
		case under(pkg, "audit"):
			only(pkg, "internal/...", "errs", "toolctx", "toolctx/adapter", "middleware", "middleware/httpmw", "audit")
		}
	}

	// The adapters are imported by what serves calls (serve, the proxy, the
	// examples), the test kits and the benchmarks; never by a layer below.
	adapters := []string{"toolctx/mcpsdk", "toolctx/mcpgo"}
	for pkg := range deps {
		if slices.ContainsFunc([]string{"serve", "cmd", "examples", "toolmwtest", "bench"}, func(a string) bool { return under(pkg, a) }) || slices.Contains(adapters, pkg) {
			continue
		}
		for _, d := range own(pkg) {
			if slices.Contains(adapters, d) {
				t.Errorf("%s imports the adapter %s: only serve, cmd, examples, the test kits and bench may", pkg, d)
			}
		}
	}

	// What a user builds by importing a layer.
	heavy := map[string][]string{
		"middleware": {"github.com/modelcontextprotocol/go-sdk", "github.com/mark3labs/mcp-go", "modernc.org/sqlite", "github.com/jackc/pgx", "github.com/redis/go-redis", "go.opentelemetry.io"},
		"audit":      {"github.com/modelcontextprotocol/go-sdk", "github.com/mark3labs/mcp-go", "modernc.org/sqlite", "github.com/jackc/pgx", "go.opentelemetry.io"},
	}
	for _, pkg := range []string{"middleware", "middleware/httpmw", "audit"} {
		layer := strings.Split(pkg, "/")[0]
		for _, d := range deps[pkg] {
			for _, h := range heavy[layer] {
				if under(d, h) {
					t.Errorf("importing %s builds %s: the layer %s promises not to", pkg, d, layer)
				}
			}
		}
	}
}

// TestPackagesAreListed holds docs/README.md's list of packages to the
// module: every package go list names has its line ("- `PATH` — ..."),
// and every line names a package that exists.
func TestPackagesAreListed(t *testing.T) {
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = ".."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	want := map[string]bool{}
	for _, p := range strings.Fields(string(out)) {
		want[strings.TrimPrefix(p, module)] = true
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Packages and layering\n")
	if !ok {
		t.Fatal(`README.md has no section "## Packages and layering"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	listed := map[string]bool{}
	for _, line := range strings.Split(section, "\n") {
		rest, ok := strings.CutPrefix(line, "- `")
		if !ok {
			continue
		}
		path, tail, ok := strings.Cut(rest, "`")
		if !ok || !strings.HasPrefix(tail, " — ") {
			continue // a layering rule, not a package's line
		}
		if listed[path] {
			t.Errorf("README.md lists %s twice", path)
		}
		listed[path] = true
		if !want[path] {
			t.Errorf("README.md lists %s, which go list does not name", path)
		}
	}
	for p := range want {
		if !listed[p] {
			t.Errorf("README.md's package list lacks %s (one line: \"- `%s` — what it is\")", p, p)
		}
	}
}
