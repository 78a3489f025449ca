package e2e

import (
	"strings"
	"testing"
)

// The catalogue imports (docs/api.md §17) and promotion evaluation
// (docs/api.md §18), end to end on both stores.

func productsPath(company string) string {
	return "/pos/clover/company/" + company + "/import/products"
}

func categoriesPath(company string) string {
	return "/pos/clover/company/" + company + "/import/productCategories"
}

// catalogueIDs lists a company's product or category ids through the
// operator API (kind "products" or "categories").
func (s *server) catalogueIDs(t *testing.T, admin, company, kind string) string {
	t.Helper()
	r := s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/"+company+"/"+kind+"?pageSize=1000", "")
	mustStatus(t, r, 200)
	var ids []string
	key := "productId"
	if kind == "categories" {
		key = "posProductCategoryId"
	}
	for _, e := range r.JSON(t)["data"].([]any) {
		ids = append(ids, e.(map[string]any)[key].(string))
	}
	return strings.Join(ids, " ")
}

func TestProductImport(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok, admin := s.posToken(t), s.adminToken(t)
		s.company(t, admin, "shop", "S1")
		imp := func(ct, body string) response {
			t.Helper()
			return s.request(t, req{Method: "POST", Path: productsPath("shop"), Token: tok, ContentType: ct, Body: body})
		}
		mustImport(t, s.call(t, tok, "POST", categoriesPath("shop"), items(`{"posProductCategoryId":"PASTRY","name":"Pastry"}`)))

		// Errors, a warning, and what is stored.
		r := imp("application/json", items(
			`{"productId":"P1","productName":"Croissant","productCategoryId":"PASTRY","productCategory":"Pastry","manufacturer":"Us","price":2.505,"extra":1}`,
			`{"productName":"no id"}`,
			`{"productId":"a/b"}`,
			`{"productId":"P1","productName":"again"}`,
			`{"productId":"P2","price":-1}`,
			`{"productId":"P3","price":1e10}`,
			`{"productId":"P4","productCategoryId":"NOPE","price":null}`,
			`{"productId":"P5","productName":"`+strings.Repeat("x", 501)+`"}`,
			`{"productId":"P6","price":0.125}`))
		badID := "The productId field must be 1-128 printable characters without '/', '\\', '?', '#', '%' or surrounding spaces."
		checkResult(t, mustImport(t, r), importResult{Status: "CompletedWithErrors", CreatedCount: 3, Errors: []importError{
			{"", 2, "The productId field is required.", "productId: missing or empty"},
			{"a/b", 3, badID, `productId: "a/b"`},
			{"P1", 4, "The productId 'P1' is given more than once in this request; only its first item (row 1) is imported.", `productId: "P1" also on row 1`},
			{"P2", 5, "The price must not be negative.", "price: -1"},
			{"P3", 6, "The price must be at most 1000000000.00.", "price: 1e10"},
			{"P5", 8, "The productName field must be at most 500 bytes.", "productName: 501 bytes"},
		}, Warnings: []importWarning{
			{"P4", 7, "The product's category is not in the catalogue of company 'shop'; the product is imported anyway.", `productCategoryId: "NOPE"`},
		}})
		r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/shop/products?pageSize=2", "")
		mustStatus(t, r, 200)
		// 2.505 rounds half to even to 2.50; 0.125 to 0.12 (exactly, not through float64).
		got := string(r.Body)
		if !strings.Contains(got, `"productId":"P1","productName":"Croissant","productCategoryId":"PASTRY","productCategory":"Pastry","manufacturer":"Us","price":2.50,`) ||
			!strings.Contains(got, `"productId":"P4","productName":"","productCategoryId":"NOPE","productCategory":"","manufacturer":"","price":null,`) ||
			!strings.HasSuffix(got, `"page":{"page":1,"pageSize":2,"total":3}}`) {
			t.Fatalf("products: %s", got)
		}
		r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/shop/products?page=2&pageSize=2", "")
		if !strings.Contains(string(r.Body), `"productId":"P6",`) || !strings.Contains(string(r.Body), `"price":0.12,`) {
			t.Fatalf("page 2: %s", r.Body)
		}

		// XML, and a second import: updated, not created.
		r = imp("application/xml", `<ProductImportDto><items><productId>P1</productId><productName>Croissant</productName><price>2.5</price></items>`+
			`<items><productId>P7</productId><price>3</price></items></ProductImportDto>`)
		checkResult(t, mustImport(t, r), importResult{Status: "Completed", CreatedCount: 1, UpdatedCount: 1})
		if got := s.catalogueIDs(t, admin, "shop", "products"); got != "P1 P4 P6 P7" {
			t.Fatalf("products after XML: %s", got)
		}
		// The catalogue's ids follow the imports; promotions are checked against them.
		r = s.request(t, importReq(tok, "shop", "application/json", items(`{"id":"X","name":"x","productIds":["P1","P99"],"categoryIds":["PASTRY","C9"]}`)))
		checkResult(t, mustImport(t, r), importResult{Status: "Completed", CreatedCount: 1, Warnings: []importWarning{{"X", 1,
			"The promotion names categories or products that are not in the catalogue of company 'shop'; it is imported anyway.",
			`categoryIds: "C9"; productIds: "P99"`}}})

		// Bad bodies store nothing.
		mustProblem(t, imp("application/json", `{"items":[{"productId":"P8","price":"2.5"}]}`), 400, "The items[0].price field must be a number.",
			map[string][]string{"items[0].price": {"The items[0].price field must be a number."}})
		eof := "The request body is not valid JSON: unexpected end of input."
		mustProblem(t, imp("application/json", `{"items":[{"productId":"P8"}`), 400, eof, map[string][]string{"$": {eof}})
		mustProblem(t, imp("application/xml", `<P><items><productId>P8</productId><price>cheap</price></items></P>`), 400, "The items[0].price field must be a number.",
			map[string][]string{"items[0].price": {"The items[0].price field must be a number."}})
		mustProblem(t, imp("text/csv", `productId`), 415, "*", nil)
		tooMany := `{"items":[` + strings.TrimSuffix(strings.Repeat(`{"productId":"Z"},`, 100_001), ",") + `]}`
		mustProblem(t, imp("application/json", tooMany), 413, "The import holds more than 100000 items; send at most 100000 per request.", nil)
		if got := s.catalogueIDs(t, admin, "shop", "products"); got != "P1 P4 P6 P7" {
			t.Fatalf("products after refused bodies: %s", got)
		}

		// The company: unknown, hidden, disabled, switched off; the token.
		mustProblem(t, s.call(t, tok, "POST", productsPath("nope"), `{}`), 404, "Company 'nope' is not registered.", nil)
		other := restrictedClient(t, s, admin)
		mustProblem(t, s.call(t, other, "POST", productsPath("shop"), `{}`), 404, "Company 'shop' is not registered.", nil)
		mustStatus(t, s.call(t, other, "POST", productsPath("other-co"), `{}`), 200)
		patch := func(body string) {
			mustStatus(t, s.call(t, admin, "PATCH", "/admin/v1/pos-systems/clover/companies/shop", body), 200)
		}
		patch(`{"features":{"productsImport":false}}`)
		mustProblem(t, imp("application/json", `{}`), 403, "Products import is switched off for company 'shop'.", nil)
		mustProblem(t, s.call(t, tok, "POST", categoriesPath("shop"), `{}`), 403,
			"Products import is switched off for company 'shop'.", nil)
		patch(`{"features":{"productsImport":true},"status":"Disabled"}`)
		mustProblem(t, imp("application/json", `{}`), 403, "Company 'shop' is disabled: its catalogue cannot be imported.", nil)
		patch(`{"status":"Active"}`)
		mustProblem(t, s.call(t, "", "POST", productsPath("shop"), `{}`), 401, "*", nil)
		mustProblem(t, s.call(t, admin, "POST", productsPath("shop"), `{}`), 403, "*", nil)
		checkResult(t, mustImport(t, imp("application/json", `{"items":null}`)), importResult{Status: "Completed"})

		// Operator lists: paging bounds, another company, a restricted operator.
		msg := "The pageSize parameter must be an integer from 1 to 1000."
		mustProblem(t, s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/shop/products?pageSize=0", ""), 400, msg,
			map[string][]string{"pageSize": {msg}})
		mustProblem(t, s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/nope/categories", ""), 404, `company "nope" not found`, nil)
		mustProblem(t, s.call(t, tok, "GET", "/admin/v1/pos-systems/clover/companies/shop/products", ""), 403, "*", nil)
		if got := s.catalogueIDs(t, admin, "other-co", "products"); got != "" {
			t.Fatalf("other-co's products: %q", got)
		}
	})
}

func TestCategoryImport(t *testing.T) {
	forEachStore(t, func(t *testing.T, dsn string) {
		s := start(t, dsn)
		tok, admin := s.posToken(t), s.adminToken(t)
		s.company(t, admin, "shop", "S1")
		imp := func(body string) response {
			t.Helper()
			return s.call(t, tok, "POST", categoriesPath("shop"), body)
		}
		// A tree whose parent comes later in the request, and one stored.
		checkResult(t, mustImport(t, imp(items(
			`{"posProductCategoryId":"PASTRY","name":"Pastry","posProductParentCategoryId":"BAKERY","posCatalogId":"main"}`,
			`{"posProductCategoryId":"BAKERY","name":"Bakery","posProductParentCategoryId":null}`))),
			importResult{Status: "Completed", CreatedCount: 2})
		cycle := "The parent categories form a cycle: a category cannot be its own ancestor."
		r := imp(items(
			`{"posProductCategoryId":"CAKE","name":"Cake","posProductParentCategoryId":"PASTRY"}`, // parent stored
			`{"posProductCategoryId":"C1","name":"c1","posProductParentCategoryId":"C2"}`,
			`{"posProductCategoryId":"C2","name":"c2","posProductParentCategoryId":"C1"}`,
			`{"posProductCategoryId":"C3","name":"c3","posProductParentCategoryId":"C1"}`, // through the cycle
			`{"posProductCategoryId":"ORPHAN","name":"o","posProductParentCategoryId":"NOPE"}`,
			`{"posProductCategoryId":"SELF","name":"s","posProductParentCategoryId":"SELF"}`,
			`{"posProductCategoryId":"Q1","name":""}`,
			`{"posProductCategoryId":"Q2","name":"q2","posProductParentCategoryId":"Q1"}`,
			`{"name":"no id"}`,
			`{"posProductCategoryId":"CAKE","name":"again"}`))
		checkResult(t, mustImport(t, r), importResult{Status: "CompletedWithErrors", CreatedCount: 1, Errors: []importError{
			{"C1", 2, cycle, `posProductParentCategoryId: "C1" > "C2" > "C1"`},
			{"C2", 3, cycle, `posProductParentCategoryId: "C1" > "C2" > "C1"`},
			{"C3", 4, "The parent category 'C1' cannot be stored, so neither can this one.", `posProductParentCategoryId: "C1" (` + cycle + `)`},
			{"ORPHAN", 5, "The parent category 'NOPE' is neither in this request nor in the catalogue of company 'shop'.", `posProductParentCategoryId: "NOPE"`},
			{"SELF", 6, "A category cannot be its own parent.", `posProductParentCategoryId: "SELF"`},
			{"Q1", 7, "The name field is required.", "name: missing or empty"},
			{"Q2", 8, "The parent category 'Q1' is neither in this request nor in the catalogue of company 'shop'.", `posProductParentCategoryId: "Q1" (row 7, which has errors)`},
			{"", 9, "The posProductCategoryId field is required.", "posProductCategoryId: missing or empty"},
			{"CAKE", 10, "The posProductCategoryId 'CAKE' is given more than once in this request; only its first item (row 1) is imported.", `posProductCategoryId: "CAKE" also on row 1`},
		}})
		// A stored category moved under its own descendant: a cycle across the
		// request and the store; the stored tree stays as it was.
		r = imp(items(`{"posProductCategoryId":"BAKERY","name":"Bakery","posProductParentCategoryId":"CAKE"}`,
			`{"posProductCategoryId":"TEA","name":"Tea"}`))
		checkResult(t, mustImport(t, r), importResult{Status: "CompletedWithErrors", CreatedCount: 1, Errors: []importError{
			{"BAKERY", 1, cycle, `posProductParentCategoryId: "BAKERY" > "CAKE" > "PASTRY" > "BAKERY"`},
		}})
		r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/shop/categories?pageSize=2&page=2", "")
		mustStatus(t, r, 200)
		if !strings.Contains(string(r.Body), `"posProductCategoryId":"PASTRY","name":"Pastry","posProductParentCategoryId":"BAKERY","posCatalogId":"main"`) ||
			!strings.HasSuffix(string(r.Body), `"page":{"page":2,"pageSize":2,"total":4}}`) {
			t.Fatalf("categories page 2: %s", r.Body)
		}
		if got := s.catalogueIDs(t, admin, "shop", "categories"); got != "BAKERY CAKE PASTRY TEA" {
			t.Fatalf("categories: %s", got)
		}
		// A malformed end stores nothing.
		msg := "The request body is not valid JSON: invalid character ',' at start of value at byte offset 56."
		mustProblem(t, imp(`{"items":[{"posProductCategoryId":"LATE","name":"late"}],}`), 400, msg, map[string][]string{"$": {msg}})
		if got := s.catalogueIDs(t, admin, "shop", "categories"); got != "BAKERY CAKE PASTRY TEA" {
			t.Fatalf("categories after a malformed body: %s", got)
		}

		// The operator's catalogue replacement works on the same tables: kept
		// entries keep their fields, a kept child of a removed parent is 409.
		cat := "/admin/v1/pos-systems/clover/companies/shop/catalogue"
		put := func(body string) response {
			return s.call(t, admin, "PUT", cat, body)
		}
		mustProblem(t, put(`{"categoryIds":["CAKE","PASTRY","TEA"]}`), 409,
			"Category 'PASTRY' has the parent 'BAKERY', which the catalogue would no longer hold; list 'BAKERY' too, or re-import the categories.", nil)
		mustBody(t, put(`{"categoryIds":["BAKERY","PASTRY","CAKE","NEW"],"productIds":["SKU-1"]}`),
			`{"data":{"posSystemId":"clover","posCompanyId":"shop","categoryIds":["BAKERY","CAKE","NEW","PASTRY"],"productIds":["SKU-1"]}}`)
		r = s.call(t, admin, "GET", "/admin/v1/pos-systems/clover/companies/shop/categories", "")
		if !strings.Contains(string(r.Body), `"posProductCategoryId":"CAKE","name":"Cake","posProductParentCategoryId":"PASTRY"`) ||
			!strings.Contains(string(r.Body), `"posProductCategoryId":"NEW","name":"","posProductParentCategoryId":"","posCatalogId":""`) ||
			strings.Contains(string(r.Body), `"TEA"`) {
			t.Fatalf("categories after the replacement: %s", r.Body)
		}
	})
}
