package main

import (
	"regexp"
	"strings"
	"testing"
)

// TestImportCatalogueCommands imports categories and products from CSV and
// JSON files into the demo company through a running server, and lists
// them from the store.
func TestImportCatalogueCommands(t *testing.T) {
	base, db := serveDemo(t)
	env := map[string]string{"POSGATE_SERVER": base, "POSGATE_CLIENT_ID": "demo-pos", "POSGATE_CLIENT_SECRET": "demo-pos-secret", "POSGATE_DATABASE": db}

	cats := writeFile(t, "categories.csv", "\ufeffposProductCategoryId,name,posProductParentCategoryId\n"+
		"TEA,Tea,DRINKS\nDRINKS,Drinks,\nLOOP,Loop,LOOP\n")
	out := mustCLI(t, env, "import", "productCategories", cats, "--company", "demo-company", "--quiet")
	if !strings.Contains(out, "status:   CompletedWithErrors\ncreated:  2\nupdated:  0\nerrors:   1\nwarnings: 0\n") ||
		!regexp.MustCompile(`3\s+4\s+LOOP\s+A category cannot be its own parent\.`).MatchString(out) {
		t.Fatalf("import productCategories:\n%s", out)
	}
	products := writeFile(t, "products.csv", "productId,productName,productCategoryId,price\n"+
		"SKU-TEA,\"Tea, green\",TEA,1.999\nSKU-X,Mystery,NOPE,\nSKU-NEG,Negative,,-1\n")
	out = mustCLI(t, withTerminal(env), "import", "products", products, "--company", "demo-company")
	if !strings.Contains(out, "products.csv [##############################] 100%") ||
		!strings.Contains(out, "status:   CompletedWithErrors\ncreated:  2\nupdated:  0\nerrors:   1\nwarnings: 1\n") ||
		!regexp.MustCompile(`3\s+4\s+SKU-NEG\s+The price must not be negative\.`).MatchString(out) ||
		!regexp.MustCompile(`2\s+3\s+SKU-X\s+The product's category is not in the catalogue`).MatchString(out) {
		t.Fatalf("import products:\n%s", out)
	}
	// JSON as the API takes it.
	out = mustCLI(t, env, "import", "products", writeFile(t, "p.json", `{"items":[{"productId":"SKU-TEA","productName":"Tea, green","productCategoryId":"TEA","price":2}]}`),
		"--company", "demo-company", "--quiet")
	if !strings.Contains(out, "status:   Completed\ncreated:  0\nupdated:  1\n") {
		t.Fatalf("import products (JSON):\n%s", out)
	}
	// A CSV mistake is found before anything is sent.
	if out, err := runCLI(t, env, "import", "products", writeFile(t, "bad.csv", "productId,price\nA,cheap\n"), "--company", "demo-company"); err == nil ||
		!strings.Contains(describe(err), `line 2: price "cheap" is not a number`) {
		t.Fatalf("a bad price cell: %v\n%s", err, out)
	}
	if _, err := runCLI(t, env, "import", "products", writeFile(t, "none.csv", "productId\nNONE\n"), "--company", "demo-company", "--client-secret", "x"); err == nil {
		t.Fatal("a wrong secret imported")
	}

	ops := map[string]string{"POSGATE_SERVER": env["POSGATE_SERVER"]} // the demo operator, by default on a loopback server
	list := mustCLI(t, ops, "products", "list", "--pos", "clover", "--company", "demo-company")
	if !regexp.MustCompile(`SKU-TEA\s+Tea, green\s+TEA\s+-?\s*2\.00`).MatchString(list) || !regexp.MustCompile(`SKU-CROISSANT\s+Croissant\s+PASTRY\s+Demo Bakery\s+2\.50`).MatchString(list) {
		t.Fatalf("products list:\n%s", list)
	}
	list = mustCLI(t, ops, "categories", "list", "--pos", "clover", "--company", "demo-company")
	if !regexp.MustCompile(`PASTRY\s+Pastry\s+BAKERY`).MatchString(list) || !regexp.MustCompile(`TEA\s+Tea\s+DRINKS`).MatchString(list) {
		t.Fatalf("categories list:\n%s", list)
	}
}
