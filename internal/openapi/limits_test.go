package openapi_test

// The tests here keep the document's request rules equal to what posgate
// enforces. Limits that the domain exports are compared with its constants;
// limits that live unexported in internal/httpapi (the page bounds, the
// required ids of the POS bodies) are probed on a real server, so that
// neither the document nor the handlers can change a bound alone. The
// patterns are checked against the domain's own validation on sample values:
// a pattern may let through a value the server refuses (a description then
// says more), but it must never refuse a value the server accepts.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"maps"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/app"
	"github.com/posgate/posgate/internal/codec/datetime"
	"github.com/posgate/posgate/internal/openapi/openapitest"
)

// prop returns property name of component schema schema.
func prop(t *testing.T, doc *openapi3.T, schema, name string) *openapi3.Schema {
	t.Helper()
	s := doc.Components.Schemas[schema]
	if s == nil || s.Value.Properties[name] == nil {
		t.Fatalf("the document has no %s.%s", schema, name)
	}
	return s.Value.Properties[name].Value
}

func maxLen(s *openapi3.Schema) int {
	if s.MaxLength == nil {
		return -1
	}
	return int(*s.MaxLength)
}

func maxItems(s *openapi3.Schema) int {
	if s.MaxItems == nil {
		return -1
	}
	return int(*s.MaxItems)
}

func num(f *float64) float64 {
	if f == nil {
		return -1
	}
	return *f
}

// TestLimitsMatchTheDomain compares the document's lengths, counts and
// ranges with the domain constants that enforce them.
func TestLimitsMatchTheDomain(t *testing.T) {
	doc := openapitest.Document(t)
	eq := func(what string, got, want int) {
		t.Helper()
		if got != want {
			t.Errorf("%s is %d in the document, %d in posgate", what, got, want)
		}
	}
	for _, c := range []struct{ schema, prop string }{
		{"CreatePosSystemRequest", "id"}, {"CreateCompanyRequest", "posCompanyId"}, {"CreateLocationRequest", "posLocationId"},
		{"CreateLocationRequest", "posCompanyId"}, {"CreateTerminalRequest", "terminalId"}, {"CreateClientRequest", "clientId"},
		{"CreateClientRequest", "posSystemId"}, {"CreateCouponRequest", "code"}, {"CreateCouponRequest", "userId"},
		{"CreateLoyaltyUserRequest", "id"}, {"CreateSlideRequest", "slideId"}, {"SettingsLookupDto", "posCompanyId"},
	} {
		eq(c.schema+"."+c.prop+" maxLength", maxLen(prop(t, doc, c.schema, c.prop)), posgate.MaxKeyLen)
	}
	eq("CreateCouponRequest.locationIds[] maxLength", maxLen(prop(t, doc, "CreateCouponRequest", "locationIds").Items.Value), posgate.MaxKeyLen)
	eq("CreateClientRequest.companyIds[] maxLength", maxLen(prop(t, doc, "CreateClientRequest", "companyIds").Items.Value), posgate.MaxKeyLen)
	for _, p := range []string{"name", "title"} {
		eq("CreateCouponRequest."+p+" maxLength", maxLen(prop(t, doc, "CreateCouponRequest", p)), posgate.MaxTextLen)
	}
	eq("CreateCouponRequest.pictureUrl maxLength", maxLen(prop(t, doc, "CreateCouponRequest", "pictureUrl")), posgate.MaxURLLen)
	eq("CreateCouponRequest.info maxItems", maxItems(prop(t, doc, "CreateCouponRequest", "info")), posgate.MaxInfoSections)
	eq("CreateCouponRequest.locationIds maxItems", maxItems(prop(t, doc, "CreateCouponRequest", "locationIds")), posgate.MaxLocations)
	info := doc.Components.Schemas["CouponInfoInput"].Value
	eq("CouponInfoInput.title maxLength", maxLen(info.Properties["title"].Value), posgate.MaxInfoTextLen)
	eq("CouponInfoInput.items maxProperties", int(*info.Properties["items"].Value.MaxProps), posgate.MaxInfoItems)
	eq("CouponInfoInput.items values maxLength", maxLen(info.Properties["items"].Value.AdditionalProperties.Schema.Value), posgate.MaxInfoTextLen)
	for _, schema := range []string{"CreateCouponRequest", "CreateLoyaltyUserRequest", "UpdateLoyaltyUserRequest"} {
		eq(schema+".email maxLength", maxLen(prop(t, doc, schema, "email")), posgate.MaxEmailLen)
		eq(schema+".phone maxLength", maxLen(prop(t, doc, schema, "phone")), posgate.MaxPhoneLen)
	}
	for _, schema := range []string{"CreateLoyaltyUserRequest", "UpdateLoyaltyUserRequest"} {
		eq(schema+".firstName maxLength", maxLen(prop(t, doc, schema, "firstName")), posgate.MaxTextLen)
		eq(schema+".lastName maxLength", maxLen(prop(t, doc, schema, "lastName")), posgate.MaxTextLen)
		eq(schema+".gender maxLength", maxLen(prop(t, doc, schema, "gender")), posgate.MaxGenderLen)
	}
	eq("LookupLoyaltyUsersDto.keyword minLength", int(prop(t, doc, "LookupLoyaltyUsersDto", "keyword").MinLength), posgate.MinKeywordLen)
	eq("LoyaltyUsersResultDto.users maxItems", maxItems(prop(t, doc, "LoyaltyUsersResultDto", "users")), posgate.MaxUserMatches)
	eq("PromotionImportDto.items maxItems", maxItems(prop(t, doc, "PromotionImportDto", "items")), posgate.MaxPromotionImportItems)
	eq("ImportCouponsRequest.items maxItems", maxItems(prop(t, doc, "ImportCouponsRequest", "items")), posgate.MaxPromotionImportItems)
	for _, p := range []string{"categoryIds", "productIds"} {
		eq("ReplaceCatalogueRequest."+p+"[] maxLength", maxLen(prop(t, doc, "ReplaceCatalogueRequest", p).Items.Value), posgate.MaxCatalogueIDLen)
	}
	eq("PutReceiptPromotionRequest.targetUrl maxLength", maxLen(prop(t, doc, "PutReceiptPromotionRequest", "targetUrl")), posgate.MaxQRTargetLen)
	for _, schema := range []string{"CreateSlideRequest", "UpdateSlideRequest", "Slide", "CarouselSlide"} {
		d := prop(t, doc, schema, "durationSeconds")
		eq(schema+".durationSeconds minimum", int(num(d.Min)), posgate.MinSlideSeconds)
		eq(schema+".durationSeconds maximum", int(num(d.Max)), posgate.MaxSlideSeconds)
	}
	if d := prop(t, doc, "CreateSlideRequest", "durationSeconds").Default; d != float64(posgate.DefaultSlideSeconds) {
		t.Errorf("CreateSlideRequest.durationSeconds default %v, posgate %d", d, posgate.DefaultSlideSeconds)
	}
	for _, schema := range []string{"CreateSlideRequest", "UpdateSlideRequest", "Slide"} {
		eq(schema+".position maximum", int(num(prop(t, doc, schema, "position").Max)), posgate.MaxSlidePosition)
	}
}

// patternOf returns the compiled pattern of a property, failing when it has
// none: every property a probe below names is supposed to carry one.
func patternOf(t *testing.T, doc *openapi3.T, schema, name string) *regexp.Regexp {
	t.Helper()
	s := prop(t, doc, schema, name)
	if s.Items != nil {
		s = s.Items.Value
	}
	if s.Pattern == "" {
		t.Fatalf("%s.%s has no pattern", schema, name)
	}
	return regexp.MustCompile(s.Pattern)
}

// schemaAccepts reports whether v passes s's pattern and length bounds (the
// rules a pattern probe is about), counting characters as JSON Schema does.
func schemaAccepts(s *openapi3.Schema, re *regexp.Regexp, v string) bool {
	n := utf8.RuneCountInString(v)
	if uint64(n) < s.MinLength || (s.MaxLength != nil && uint64(n) > *s.MaxLength) {
		return false
	}
	return re.MatchString(v)
}

// TestPatternsRefuseOnlyWhatPosgateRefuses checks each pattern of the
// document against the domain's validation on sample values: whatever
// posgate accepts, the document must accept too; and each pattern must
// refuse the typical mistakes that posgate refuses, or it would say nothing.
func TestPatternsRefuseOnlyWhatPosgateRefuses(t *testing.T) {
	doc := openapitest.Document(t)
	long := func(n int) string { return strings.Repeat("x", n) }
	cases := []struct {
		name       string
		schema     string
		prop       string
		serverOK   func(string) bool
		samples    []string
		mustRefuse []string // values the pattern itself must refuse
	}{
		{
			name: "id", schema: "CreateTerminalRequest", prop: "terminalId", serverOK: posgate.ValidKey,
			samples: []string{"T1", "TERM-05", "a b", "ä€", "x.y_z~!", long(posgate.MaxKeyLen), long(posgate.MaxKeyLen + 1),
				"", " a", "a ", "\ta", "a\n", "a/b", `a\b`, "a?b", "a#b", "a%b", "a\x00b", "a\x7fb", "a\u00a0b", "\u00a0a"},
			mustRefuse: []string{"", " a", "a ", "a/b", `a\b`, "a?b", "a#b", "a%b", "a\x00b"},
		},
		{
			name: "e-mail", schema: "CreateLoyaltyUserRequest", prop: "email",
			serverOK: func(s string) bool {
				return loyaltyFieldOK(posgate.LoyaltyUser{LoyaltyCard: posgate.LoyaltyCard{Email: s}}, "email")
			},
			samples: []string{"", "a@b", "john.doe@example.com", "a@b@c", "ä@ö", "@b", "a@", "ab", "a b@c", "a@b c", "a@b\n", "\ta@b",
				strings.Repeat("a", 250) + "@b.c", strings.Repeat("a", 251) + "@b.c"},
			mustRefuse: []string{"@b", "a@", "ab", "a b@c"},
		},
		{
			name: "phone", schema: "CreateLoyaltyUserRequest", prop: "phone",
			serverOK: func(s string) bool {
				return loyaltyFieldOK(posgate.LoyaltyUser{LoyaltyCard: posgate.LoyaltyCard{Phone: s}}, "phone")
			},
			samples: []string{"", "123", "+1 (555) 555-1234", "555.1234/5", "12", "+-()", "12a3", "1 2 3", strings.Repeat("1", 32),
				strings.Repeat("1", 33), "１２３"},
			mustRefuse: []string{"12", "+-()", "12a3", "１２３"},
		},
		{
			name: "picture URL", schema: "CreateCouponRequest", prop: "pictureUrl",
			serverOK: func(s string) bool { return couponFieldOK(posgate.Coupon{PictureURL: &s}, "pictureUrl") },
			samples: []string{"https://a.example/x.png", "HTTP://A", "http://a/b c", "http://[::1]:8080/", "ftp://a", "http:/a",
				"http:///a", "//a", "a", "", " http://a", "http://a\x01", "https://" + long(posgate.MaxURLLen)},
			mustRefuse: []string{"ftp://a", "http:/a", "http:///a", "//a", "", " http://a"},
		},
		{
			name: "QR target", schema: "PutReceiptPromotionRequest", prop: "targetUrl",
			serverOK: func(s string) bool { return receiptFieldOK(s) },
			samples: []string{"https://example.com/offer", "HTTPS://x", "http://a/b c", "http://a/b\tc", "mailto:a@b", "http://",
				"https://x/" + long(posgate.MaxQRTargetLen)},
			mustRefuse: []string{"http://a/b c", "mailto:a@b", "http://"},
		},
		{
			name: "date-time", schema: "CreateCouponRequest", prop: "availableUntil",
			serverOK: func(s string) bool { _, err := datetime.Parse(s); return err == nil },
			samples: []string{"2030-05-01T12:00:00Z", "2030-05-01T12:00:00.123+02:00", "2030-05-01T12:00:00,5Z", "2030-05-01T12:00:00",
				"2030-05-01T12:00:00.5", "2030-05-01", "2030-05-01T1:00:00.5Z", "2030-5-1", "2030-05-01 12:00:00", "12:00",
				"2030-05-01T12:00Z", "2030-05-01T12:00:00+0200", "tomorrow", "2030-02-30"},
			mustRefuse: []string{"2030-5-1", "2030-05-01 12:00:00", "12:00", "2030-05-01T12:00Z", "tomorrow"},
		},
	}
	for _, c := range cases {
		s := prop(t, doc, c.schema, c.prop)
		re := patternOf(t, doc, c.schema, c.prop)
		for _, v := range c.samples {
			if c.serverOK(v) && !schemaAccepts(s, re, v) {
				t.Errorf("%s %q: posgate accepts it, %s.%s refuses it", c.name, v, c.schema, c.prop)
			}
		}
		for _, v := range c.mustRefuse {
			if c.serverOK(v) {
				t.Errorf("%s %q: posgate accepts it, the probe is wrong", c.name, v)
			}
			if schemaAccepts(s, re, v) {
				t.Errorf("%s %q: posgate refuses it, %s.%s does not say so", c.name, v, c.schema, c.prop)
			}
		}
	}
	// Every id, e-mail, phone and date-time property uses the same pattern
	// as the one probed, so the probes above cover them all.
	same := map[string][]struct{ schema, prop string }{
		prop(t, doc, "CreateTerminalRequest", "terminalId").Pattern: {{"CreatePosSystemRequest", "id"}, {"CreateCompanyRequest", "posCompanyId"},
			{"CreateLocationRequest", "posLocationId"}, {"CreateLocationRequest", "posCompanyId"}, {"CreateClientRequest", "clientId"},
			{"CreateClientRequest", "posSystemId"}, {"CreateClientRequest", "companyIds"}, {"CreateCouponRequest", "code"},
			{"CreateCouponRequest", "userId"}, {"CreateCouponRequest", "locationIds"}, {"CreateLoyaltyUserRequest", "id"},
			{"CreateSlideRequest", "slideId"}},
		prop(t, doc, "CreateLoyaltyUserRequest", "email").Pattern: {{"CreateCouponRequest", "email"}, {"UpdateLoyaltyUserRequest", "email"}},
		prop(t, doc, "CreateLoyaltyUserRequest", "phone").Pattern: {{"CreateCouponRequest", "phone"}, {"UpdateLoyaltyUserRequest", "phone"}},
		prop(t, doc, "CreateCouponRequest", "availableUntil").Pattern: {{"PromotionValidity", "startDate"}, {"PromotionValidity", "endDate"},
			{"PromotionRecurrence", "startDate"}, {"PromotionRecurrence", "endDate"}},
	}
	for pattern, props := range same {
		for _, p := range props {
			s := prop(t, doc, p.schema, p.prop)
			if s.Items != nil {
				s = s.Items.Value
			}
			if s.Pattern != pattern {
				t.Errorf("%s.%s has pattern %q, want %q", p.schema, p.prop, s.Pattern, pattern)
			}
		}
	}
}

// fieldOK reports whether err names no problem with field.
func fieldOK(err error, field string) bool {
	var e *posgate.Error
	if err == nil {
		return true
	}
	if !errors.As(err, &e) {
		panic(err)
	}
	_, bad := e.Fields[field]
	return !bad
}

func loyaltyFieldOK(u posgate.LoyaltyUser, field string) bool {
	return fieldOK(u.Validate(), field)
}

func couponFieldOK(c posgate.Coupon, field string) bool {
	c.Normalize()
	return fieldOK(c.Validate(), field)
}

func receiptFieldOK(target string) bool {
	p := posgate.ReceiptPromotion{POSSystemID: "p", CompanyID: "c", PrimaryText: "x", TargetURL: target}
	return fieldOK(p.Validate(), "targetUrl")
}

// probe is a running posgate with the demo data set and its two tokens.
type probe struct {
	base       string
	client     *http.Client
	pos, admin string
}

// startProbe runs posgate (demo data, SQLite) until the test ends; every
// response is checked against the document as in the end-to-end tests.
func startProbe(t *testing.T) *probe {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cfg := app.Config{Listen: "127.0.0.1:0", Database: filepath.Join(t.TempDir(), "posgate.db"), Demo: true}
	ready, done := make(chan app.Addrs, 1), make(chan error, 1)
	go func() { done <- app.Serve(ctx, cfg, func(a app.Addrs) { ready <- a }) }()
	p := &probe{}
	select {
	case a := <-ready:
		p.base = "http://" + a.API.String()
	case err := <-done:
		cancel()
		t.Fatalf("serve: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("posgate did not start")
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	p.client = &http.Client{Transport: openapitest.New(t).Transport(t, nil), Timeout: 30 * time.Second}
	p.pos = p.token(t, "demo-pos", "demo-pos-secret", "pos_integration")
	p.admin = p.token(t, "demo-admin", "demo-admin-secret", "admin")
	return p
}

func (p *probe) token(t *testing.T, id, secret, scope string) string {
	t.Helper()
	r, err := http.NewRequest("POST", p.base+"/connect/token",
		strings.NewReader(url.Values{"grant_type": {"client_credentials"}, "scope": {scope}}.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.SetBasicAuth(id, secret)
	status, body := p.send(t, r)
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.Unmarshal(body, &tok); status != http.StatusOK || err != nil {
		t.Fatalf("token for %s: %d %s", id, status, body)
	}
	return tok.AccessToken
}

func (p *probe) send(t *testing.T, r *http.Request) (int, []byte) {
	t.Helper()
	resp, err := p.client.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// do sends a JSON request with token and returns the status and the
// properties a 400 names.
func (p *probe) do(t *testing.T, method, path, token string, body any) (int, map[string][]string) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	r, err := http.NewRequest(method, p.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		r.Header.Set("Content-Type", "application/json")
	}
	r.Header.Set("Authorization", "Bearer "+token)
	status, b := p.send(t, r)
	var problem struct {
		Errors map[string][]string `json:"errors"`
	}
	if status == http.StatusBadRequest {
		if err := json.Unmarshal(b, &problem); err != nil {
			t.Fatalf("%s %s: 400 without a problem: %s", method, path, b)
		}
	}
	return status, problem.Errors
}

// queryParam returns the schema of query parameter name of an operation.
func queryParam(t *testing.T, doc *openapi3.T, method, path, name string) *openapi3.Schema {
	t.Helper()
	item := doc.Paths.Value(path)
	if item == nil || item.GetOperation(method) == nil {
		t.Fatalf("the document has no %s %s", method, path)
	}
	if p := item.GetOperation(method).Parameters.GetByInAndName("query", name); p != nil {
		return p.Schema.Value
	}
	t.Fatalf("%s %s has no query parameter %s", method, path, name)
	return nil
}

// TestPageBoundsMatchTheServer sends each paged route its documented
// bounds and one step beyond each: the bounds must be answered, the steps
// beyond must be 400 naming the parameter.
func TestPageBoundsMatchTheServer(t *testing.T) {
	doc := openapitest.Document(t)
	p := startProbe(t)
	routes := []struct {
		method, docPath, path, token string
		body                         any
	}{
		{"POST", "/pos/{posSystemId}/coupon/couponCode/search", "/pos/clover/coupon/couponCode/search", p.pos, map[string]string{"code": "NONE"}},
		{"GET", "/pos/{posSystemId}/coupon/active/locationId/{posLocationId}", "/pos/clover/coupon/active/locationId/LOC123", p.pos, nil},
		{"GET", "/admin/v1/pos-systems/{posSystemId}/companies/{posCompanyId}/promotions",
			"/admin/v1/pos-systems/clover/companies/demo-company/promotions", p.admin, nil},
	}
	for _, rt := range routes {
		for _, name := range []string{"page", "pageSize"} {
			s := queryParam(t, doc, rt.method, rt.docPath, name)
			if s.Min == nil || s.Max == nil {
				t.Errorf("%s %s: %s has no minimum or maximum", rt.method, rt.docPath, name)
				continue
			}
			for _, c := range []struct {
				value float64
				ok    bool
			}{{*s.Min, true}, {*s.Max, true}, {*s.Min - 1, false}, {*s.Max + 1, false}} {
				q := "?" + name + "=" + strconv.FormatFloat(c.value, 'f', -1, 64)
				status, fields := p.do(t, rt.method, rt.path+q, rt.token, rt.body)
				switch {
				case c.ok && status != http.StatusOK:
					t.Errorf("%s %s%s: %d, want 200 (the document allows it)", rt.method, rt.path, q, status)
				case !c.ok && (status != http.StatusBadRequest || fields[name] == nil):
					t.Errorf("%s %s%s: %d %v, want 400 naming %s (the document refuses it)", rt.method, rt.path, q, status, fields, name)
				}
			}
		}
	}
}

// TestRequiredIdsMatchTheServer takes, for each POS body with required
// properties, a body the server accepts, then leaves out each required
// property, and sends it shorter than its minLength: each must be a 400
// naming that property. A property that is not required may be left out.
func TestRequiredIdsMatchTheServer(t *testing.T) {
	doc := openapitest.Document(t)
	p := startProbe(t)
	bodies := []struct {
		docPath, path string
		valid         map[string]string
	}{
		{"/pos/{posSystemId}/startInteraction", "/pos/clover/startInteraction", map[string]string{"terminalId": "TERM-05", "posLocationId": "LOC123"}},
		{"/v2/pos/{posSystemId}/carousel", "/v2/pos/clover/carousel", map[string]string{"terminalId": "TERM-05", "posLocationId": "LOC123"}},
		{"/v2/pos/{posSystemId}/coupon/couponCodes/lookup", "/v2/pos/clover/coupon/couponCodes/lookup", map[string]string{"posLocationId": "LOC123", "code": "Sl75Ev"}},
		{"/v2/pos/{posSystemId}/loyaltyCard/users/lookup", "/v2/pos/clover/loyaltyCard/users/lookup", map[string]string{"posLocationId": "LOC123", "keyword": "doe"}},
		{"/v2/pos/{posSystemId}/settings/lookup", "/v2/pos/clover/settings/lookup", map[string]string{"posCompanyId": "demo-company"}},
	}
	for _, b := range bodies {
		op := doc.Paths.Value(b.docPath).Post
		schema := op.RequestBody.Value.Content.Get("application/json").Schema.Value
		if len(schema.Required) == 0 {
			t.Errorf("POST %s: the document requires nothing", b.docPath)
		}
		if status, fields := p.do(t, "POST", b.path, p.pos, b.valid); status != http.StatusOK {
			t.Fatalf("POST %s %v: %d %v, want 200", b.path, b.valid, status, fields)
		}
		for name := range b.valid {
			required := schema.Properties[name] != nil && slices.Contains(schema.Required, name)
			without := maps.Clone(b.valid)
			delete(without, name)
			status, fields := p.do(t, "POST", b.path, p.pos, without)
			if refused := status == http.StatusBadRequest && fields[name] != nil; refused != required {
				t.Errorf("POST %s without %s: %d %v; the document says required=%v", b.path, name, status, fields, required)
			}
			min := int(schema.Properties[name].Value.MinLength)
			if min == 0 {
				t.Errorf("POST %s: %s has no minLength", b.docPath, name)
				continue
			}
			short := maps.Clone(b.valid)
			short[name] = b.valid[name][:min-1]
			if status, fields := p.do(t, "POST", b.path, p.pos, short); status != http.StatusBadRequest || fields[name] == nil {
				t.Errorf("POST %s with %s %q (shorter than minLength %d): %d %v, want 400 naming it", b.path, name, short[name], min, status, fields)
			}
		}
	}
	// The keyword's minLength is the server's shortest keyword: one less is
	// refused above, exactly that many is searched.
	k := strings.Repeat("o", int(prop(t, doc, "LookupLoyaltyUsersDto", "keyword").MinLength))
	if status, fields := p.do(t, "POST", "/v2/pos/clover/loyaltyCard/users/lookup", p.pos, map[string]string{"posLocationId": "LOC123", "keyword": k}); status != http.StatusOK {
		t.Errorf("keyword %q: %d %v, want 200", k, status, fields)
	}
}
