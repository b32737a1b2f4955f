package docs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageHasItsDocInDocGo holds the rule of the project's
// standards: each package's comment is in its doc.go, and only there, and
// says what the package (or the command) is; every exported name of a
// non-main package has a doc comment.
func TestEveryPackageHasItsDocInDocGo(t *testing.T) {
	root := ".."
	dirs := map[string][]string{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			name := d.Name()
			if path != root && (strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || name == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(path, ".go") && !strings.HasSuffix(path, "_test.go") {
			dirs[filepath.Dir(path)] = append(dirs[filepath.Dir(path)], path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) < 30 {
		t.Fatalf("found only %d package directories below the module root: the walk is wrong", len(dirs))
	}
	for dir, files := range dirs {
		rel, _ := filepath.Rel(root, dir)
		if _, err := os.Stat(filepath.Join(dir, "doc.go")); err != nil {
			t.Errorf("%s: no doc.go (each package's comment lives in its doc.go)", rel)
		}
		for _, f := range files {
			fset := token.NewFileSet()
			af, err := parser.ParseFile(fset, f, nil, parser.ParseComments)
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			name, _ := filepath.Rel(root, f)
			isDoc := filepath.Base(f) == "doc.go"
			switch {
			case isDoc && af.Doc == nil:
				t.Errorf("%s: doc.go has no package comment", name)
			case isDoc:
				want := "Package " + af.Name.Name + " "
				if af.Name.Name == "main" {
					want = "Command "
				}
				if !strings.HasPrefix(af.Doc.Text(), want) {
					t.Errorf("%s: the package comment should begin %q, begins %q", name, want, firstLine(af.Doc.Text()))
				}
			case af.Doc != nil:
				t.Errorf("%s: a package comment outside doc.go (move it there: godoc would join the two)", name)
			}
			if af.Name.Name != "main" {
				for _, missing := range undocumented(af) {
					t.Errorf("%s: exported %s has no doc comment", name, missing)
				}
			}
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// undocumented lists the exported top-level names of f without a doc
// comment: functions, methods of exported types, and types, constants and
// variables (a name in a documented group counts as documented).
func undocumented(f *ast.File) []string {
	var out []string
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if !d.Name.IsExported() || d.Doc != nil {
				continue
			}
			if d.Recv != nil && (!exportedReceiver(d.Recv) || interfaceMethods[d.Name.Name]) {
				continue
			}
			out = append(out, "func "+d.Name.Name)
		case *ast.GenDecl:
			if d.Tok == token.IMPORT {
				continue
			}
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					if s.Name.IsExported() && d.Doc == nil && s.Doc == nil {
						out = append(out, "type "+s.Name.Name)
					}
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.IsExported() && d.Doc == nil && s.Doc == nil && s.Comment == nil {
							out = append(out, d.Tok.String()+" "+n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// interfaceMethods are the methods whose meaning the standard library's
// interfaces give (error, fmt.Formatter, fmt.Stringer, errors.Is/As,
// slog.LogValuer, json's): their doc comment may be the interface's.
var interfaceMethods = map[string]bool{
	"Error": true, "Unwrap": true, "Is": true, "As": true, "Format": true,
	"String": true, "GoString": true, "LogValue": true,
	"MarshalJSON": true, "UnmarshalJSON": true,
}

func exportedReceiver(recv *ast.FieldList) bool {
	if len(recv.List) == 0 {
		return false
	}
	t := recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.IsExported()
		default:
			return false
		}
	}
}
