package docs_test

import (
	"bufio"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// update, set by "go test ./docs -run TestCodeBlocks -update", rewrites each
// block that differs from its source with the source, for a change of the
// API that touched many blocks; review the diff before committing it.
var update = flag.Bool("update", false, "rewrite the Go blocks of README.md and docs/ from their sources")

// root is the module's root, seen from this package's directory.
const root = ".."

// marker is the line that names a block's source: <!-- code: PATH#NAME -->.
var marker = regexp.MustCompile(`^<!--\s*code:\s*(\S+)#(\S+)\s*-->$`)

// block is one fenced ```go block of a Markdown file.
type block struct {
	file   string // relative to the module root
	line   int    // of the opening fence, 1-based
	end    int    // the line of the closing fence
	indent string // the opening fence's indentation
	src    string // the line before the fence, when it is a marker: PATH#NAME
	body   string
}

// TestCodeBlocks checks that every ```go block of README.md and docs/ is a
// copy of Go source that the build compiles (see the package comment).
func TestCodeBlocks(t *testing.T) {
	files := markdownFiles(t)
	n := 0
	for _, f := range files {
		blocks, err := goBlocks(f)
		if err != nil {
			t.Fatal(err)
		}
		if *update {
			slices.Reverse(blocks) // a rewrite moves the lines of the blocks after it
		}
		for _, b := range blocks {
			n++
			if b.src == "" {
				t.Errorf("%s:%d: a ```go block without a source: put <!-- code: PATH#NAME --> on the line before it, naming the compiled Go it is copied from", b.file, b.line)
				continue
			}
			path, name, _ := strings.Cut(b.src, "#")
			want, err := source(path, name)
			if err != nil {
				t.Errorf("%s:%d: %v", b.file, b.line, err)
				continue
			}
			if got := normalize(b.body); got != want {
				if *update {
					if err := rewrite(b, want); err != nil {
						t.Fatal(err)
					}
					t.Logf("%s:%d: rewritten from %s", b.file, b.line, b.src)
					continue
				}
				t.Errorf("%s:%d: the block is not %s as the build compiles it; copy the source into the block (or change the source, then the block):\n%s",
					b.file, b.line, b.src, firstDifference(want, got))
			}
		}
	}
	if n == 0 {
		t.Fatal("no ```go block found in README.md or docs/: the walk is broken")
	}
}

// markdownFiles returns README.md and every .md file under docs/, relative
// to the module root.
func markdownFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(root, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// goBlocks returns the ```go blocks of a Markdown file, with the marker on
// the line before each.
func goBlocks(file string) ([]block, error) {
	f, err := os.Open(filepath.Join(root, file))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var (
		blocks []block
		cur    *block
		fence  string // the fence that opened the current block (any language)
		prev   string
		lineNo int
		body   strings.Builder
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case fence == "" && strings.HasPrefix(trimmed, "```"):
			fence = trimmed[:strings.LastIndex(trimmed, "`")+1]
			if lang := strings.TrimSpace(trimmed[len(fence):]); lang == "go" {
				cur = &block{file: file, line: lineNo, indent: line[:len(line)-len(strings.TrimLeft(line, " \t"))]}
				if m := marker.FindStringSubmatch(strings.TrimSpace(prev)); m != nil {
					cur.src = m[1] + "#" + m[2]
				}
				body.Reset()
			}
		case fence != "" && trimmed == fence:
			if cur != nil {
				cur.body = body.String()
				cur.end = lineNo
				blocks = append(blocks, *cur)
				cur = nil
			}
			fence = ""
		case cur != nil:
			body.WriteString(line)
			body.WriteByte('\n')
		}
		prev = line
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if fence != "" {
		return nil, fmt.Errorf("%s: a fence is never closed", file)
	}
	return blocks, nil
}

// rewrite replaces the lines of b between its fences with src, indented as
// its fence is.
func rewrite(b block, src string) error {
	path := filepath.Join(root, b.file)
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	var body []string
	for l := range strings.SplitSeq(src, "\n") {
		if l != "" {
			l = b.indent + l
		}
		body = append(body, l)
	}
	out := append(append(append([]string{}, lines[:b.line]...), body...), lines[b.end-1:]...)
	return os.WriteFile(path, []byte(strings.Join(out, "\n")), 0o644)
}

// source returns what a block naming path#name must be: the body of the
// function name in path, or the lines between "// doc:begin name" and
// "// doc:end name", normalized.
func source(path, name string) (string, error) {
	if !strings.HasSuffix(path, ".go") || strings.Contains(path, "..") || filepath.IsAbs(path) {
		return "", fmt.Errorf("%s: not a Go file of this module", path)
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(path)))
	if err != nil {
		return "", fmt.Errorf("the block's source: %w", err)
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, path, data, parser.ParseComments)
	if err != nil {
		return "", fmt.Errorf("the block's source does not parse: %w", err)
	}
	for _, cg := range file.Comments {
		for _, c := range cg.List {
			if strings.HasPrefix(c.Text, "//go:build") && strings.Contains(c.Text, "ignore") {
				return "", fmt.Errorf("%s: the build ignores this file, so it proves nothing", path)
			}
		}
	}
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && fn.Name.Name == name && fn.Body != nil {
			start := fset.Position(fn.Body.Lbrace).Offset + 1
			end := fset.Position(fn.Body.Rbrace).Offset
			return normalize(string(data[start:end])), nil
		}
	}
	begin, end := "// doc:begin "+name, "// doc:end "+name
	lines := strings.Split(string(data), "\n")
	from := -1
	for i, l := range lines {
		switch strings.TrimSpace(l) {
		case begin:
			if from >= 0 {
				return "", fmt.Errorf("%s: %q twice", path, begin)
			}
			from = i + 1
		case end:
			if from < 0 {
				return "", fmt.Errorf("%s: %q before its begin", path, end)
			}
			return normalize(strings.Join(lines[from:i], "\n")), nil
		}
	}
	return "", fmt.Errorf("%s has no function %s and no region %q ... %q", path, name, begin, end)
}

// normalize drops leading and trailing blank lines, trailing spaces and the
// indentation every line shares, so that a block need not be indented as
// deeply as its source.
func normalize(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\r\n", "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	prefix, first := "", true
	for _, l := range lines {
		if l == "" {
			continue
		}
		if first {
			prefix, first = l[:len(l)-len(strings.TrimLeft(l, " \t"))], false
			continue
		}
		for !strings.HasPrefix(l, prefix) {
			prefix = prefix[:len(prefix)-1]
		}
	}
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, prefix)
	}
	return strings.Join(lines, "\n")
}

// firstDifference shows the first line at which got departs from want.
func firstDifference(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl || i >= len(w) || i >= len(g) {
			return fmt.Sprintf("  line %d of the block\n  source: %q\n  block:  %q", i+1, wl, gl)
		}
	}
	return "  (they differ in a way no line shows)"
}
