package app

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"testing"
)

// TestWiringReadsInSteps: no function of this package is longer than
// maxFuncLines, so that the wiring reads as named steps (open the store,
// build the parts, mount the routes, serve, shut down).
func TestWiringReadsInSteps(t *testing.T) {
	const maxFuncLines = 80
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no files: %v", err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok {
				continue
			}
			if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > maxFuncLines {
				t.Errorf("%s: %s is %d lines long, more than %d", f, fn.Name.Name, n, maxFuncLines)
			}
		}
	}
}
