package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/posgate/posgate/internal/demo"
)

// TestPortalUpload: the catalogue page's upload (docs/api.md §23) in the
// browser. A file of promotions with a failing item is refused whole: the
// page names the item (entity id, item number) and nothing is stored; the
// fixed file is stored, and the promotions.imported event's use case is
// the POS API's. A products file is stored the same way.
func TestPortalUpload(t *testing.T) {
	chrome := chromium(t)
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		admin := s.adminToken(t)
		dir := t.TempDir()
		file := func(name, body string) string {
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}
		bad := file("bad.json", `[{"id":"UP-1","name":"fine"},{"id":"UP-2","name":"second","promotionResults":[{"promotionType":"Fixed","value":1}]}]`)
		good := file("good.json", `[{"id":"UP-1","name":"fine"},{"id":"UP-2","name":"second","promotionResults":[{"promotionType":"Amount","value":1}]}]`)
		products := file("products.json", `{"items":[{"productId":"UP-SKU","productName":"Uploaded","price":2.5}]}`)

		b := newBrowser(t, chrome)
		b.portalSignIn(s.base, "/portal/catalogue", demo.AdminEmail, demo.AdminPassword, "")
		upload := func(kind, path string) {
			t.Helper()
			b.eval("choose "+kind, `document.querySelector("#kind").value = "`+kind+`"; ""`)
			if err := chromedp.Do(b.ctx, chromedp.SetUploadFiles("#file", []string{path})); err != nil {
				t.Fatal(err)
			}
			b.submitForm("#upload")
		}

		upload("promotions", bad)
		if st, e := b.status(), b.shown("error"); st != "422" || e != "The file was refused: 1 items failed, nothing was stored. Fix them and upload the file again." {
			t.Fatalf("the bad file: %s %q", st, e)
		}
		rows := b.eval("the errors", `[...document.querySelectorAll("tr.upload-error")].map(r => r.cells[0].innerText + " " + r.cells[1].innerText + " " + r.cells[2].innerText).join("|")`)
		if !strings.HasPrefix(rows, "UP-2 2 ") || strings.Contains(rows, "|") {
			t.Fatalf("the bad file's errors: %q", rows)
		}
		for _, id := range []string{"UP-1", "UP-2"} {
			mustStatus(t, s.do(t, req{Method: "GET", Path: companyPath + "/promotions/" + id, Token: admin}), 404)
		}

		upload("promotions", good)
		if st, n := b.status(), b.shown("notice"); st != "200" || n != "promotions: 2 created, 0 updated." {
			t.Fatalf("the good file: %s %q (error %q)", st, n, b.shown("error"))
		}
		for _, id := range []string{"UP-1", "UP-2"} {
			mustStatus(t, s.do(t, req{Method: "GET", Path: companyPath + "/promotions/" + id, Token: admin}), 200)
		}
		if got := b.eval("the promotions", `document.querySelector("#promotions").innerText`); !strings.Contains(got, "UP-2") {
			t.Fatalf("the promotions after the upload: %q", got)
		}

		upload("products", products)
		if n := b.shown("notice"); n != "products: 1 created, 0 updated." {
			t.Fatalf("the products file: %q (error %q)", n, b.shown("error"))
		}
		if got := b.eval("the products", `document.querySelector("#products").innerText`); !strings.Contains(got, "UP-SKU") {
			t.Fatalf("the products after the upload: %q", got)
		}

		// CSV files, as posgate import takes them: a line the conversion
		// refuses names its line; an item the checks fail names its item
		// and line; nothing stored either way.
		upload("products", file("bad.csv", "productId,productName,price\nCSV-SKU,ok,1.5\nCSV-SKU2,bad,abc\n"))
		if st, e := b.status(), b.shown("error"); st != "400" || !strings.Contains(e, "1 line is bad; nothing was imported.") || !strings.Contains(e, `line 3: price "abc" is not a number`) {
			t.Fatalf("a bad CSV line: %s %q", st, e)
		}
		if r := s.do(t, req{Method: "GET", Path: companyPath + "/products", Token: admin}); r.Status != 200 || strings.Contains(string(r.Body), "CSV-SKU") {
			t.Fatalf("products after the bad CSV file: %d %s", r.Status, r.Body)
		}
		upload("promotions", file("bad-item.csv", "id,name,promotionType,value\nCSV-1,first,Amount,1\n\nCSV-2,second,Fixed,1\n"))
		rows = b.eval("the errors", `[...document.querySelectorAll("tr.upload-error")].map(r => r.cells[0].innerText + " " + r.cells[1].innerText + " " + r.cells[2].innerText).join("|")`)
		if st := b.status(); st != "422" || rows != "CSV-2 2 4" {
			t.Fatalf("a failing CSV item: %s %q (error %q)", st, rows, b.shown("error"))
		}
		mustStatus(t, s.do(t, req{Method: "GET", Path: companyPath + "/promotions/CSV-1", Token: admin}), 404)
		upload("promotions", file("good.csv", "id,name,promotionType,value\nCSV-1,first,Amount,1\nCSV-2,second,Percentage,10\n"))
		if n := b.shown("notice"); n != "promotions: 2 created, 0 updated." {
			t.Fatalf("a good CSV file: %q (error %q)", n, b.shown("error"))
		}
		mustStatus(t, s.do(t, req{Method: "GET", Path: companyPath + "/promotions/CSV-2", Token: admin}), 200)

		// Categories: the tree checks, which run in the store's
		// transaction, refuse the file whole too (C2's parent is C3, which
		// is in neither the file nor the store); then the fixed file.
		upload("productCategories", file("tree.json", `[{"posProductCategoryId":"C1","name":"root"},{"posProductCategoryId":"C2","name":"child","posProductParentCategoryId":"C3"}]`))
		rows = b.eval("the errors", `[...document.querySelectorAll("tr.upload-error")].map(r => r.cells[0].innerText + " " + r.cells[1].innerText).join("|")`)
		if st := b.status(); st != "422" || rows != "C2 2" {
			t.Fatalf("a category without its parent: %s %q (error %q)", st, rows, b.shown("error"))
		}
		if r := s.do(t, req{Method: "GET", Path: companyPath + "/categories", Token: admin}); strings.Contains(string(r.Body), `"C1"`) {
			t.Fatalf("categories after the refused file: %s", r.Body)
		}
		upload("productCategories", file("tree-ok.json", `[{"posProductCategoryId":"C1","name":"root"},{"posProductCategoryId":"C2","name":"child","posProductParentCategoryId":"C1"}]`))
		if n := b.shown("notice"); n != "categories: 2 created, 0 updated." {
			t.Fatalf("the fixed categories: %q (error %q)", n, b.shown("error"))
		}
		if r := s.do(t, req{Method: "GET", Path: companyPath + "/categories", Token: admin}); !strings.Contains(string(r.Body), `"C1"`) {
			t.Fatalf("categories after the fixed file: %s", r.Body)
		}
		if got := b.eval("the categories", `document.querySelector("#categories").innerText`); !strings.Contains(got, "C2") {
			t.Fatalf("the categories after the upload: %q", got)
		}

		// Not JSON: refused with the decoder's message, nothing stored.
		upload("productCategories", file("bad-syntax.json", `[{"posProductCategoryId":"C9","name":"x"},`))
		if st := b.status(); st != "400" {
			t.Fatalf("a malformed file: %s %q", st, b.shown("error"))
		}
		if r := s.do(t, req{Method: "GET", Path: companyPath + "/categories", Token: admin}); strings.Contains(string(r.Body), `"C9"`) {
			t.Fatalf("categories after the malformed file: %s", r.Body)
		}

		// The dashboard's recent imports (the import log, docs/api.md
		// §23): the four stored uploads, newest first; the refused files
		// left no row.
		b.navigate(s.base + "/portal")
		got := b.eval("the recent imports", `[...document.querySelectorAll("#recent-imports tr.import")].slice(0, 5).map(r =>
			[1, 2, 3, 4, 5].map(i => r.cells[i].innerText).join(" ") + " " + r.cells[6].innerText.endsWith("(portal)")).join("|")`)
		want := "clover/demo-company categories 2 0 0 true|clover/demo-company promotions 2 0 0 true|" +
			"clover/demo-company products 1 0 0 true|clover/demo-company promotions 2 0 0 true"
		if !strings.HasPrefix(got, want) || strings.Count(got, "true") != 4 {
			t.Fatalf("the recent imports:\n got %q\nwant %q", got, want)
		}
	})
}
