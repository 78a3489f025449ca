package suite

import (
	"net/http"
	"net/url"
	"strings"
)

func (r *run) tokenRequest(auth string) (*Exchange, any) {
	form := url.Values{"grant_type": {"client_credentials"}, "scope": {"pos_integration"}}
	return r.send(http.MethodPost, r.cfg.AuthURL+"/connect/token", "application/x-www-form-urlencoded", form.Encode(), auth)
}

func (r *run) tokenEndpoint() error {
	ex, v := r.tokenRequest("basic")
	m, err := okJSON(ex, v, "")
	if err != nil {
		return err
	}
	if err := shape(ex, m, map[string]string{"access_token": "string", "token_type": "string", "expires_in": "integer", "scope": "string"}); err != nil {
		return err
	}
	token := m["access_token"].(string)
	switch {
	case strings.Count(token, ".") != 2:
		return failf(ex, "access_token is not a JWT (three dot-separated parts)")
	case !strings.EqualFold(m["token_type"].(string), "Bearer"):
		return failf(ex, "token_type %q, want Bearer", m["token_type"])
	case m["expires_in"].(float64) <= 0:
		return failf(ex, "expires_in %v, want a lifetime in seconds", m["expires_in"])
	case !strings.Contains(" "+m["scope"].(string)+" ", " pos_integration "):
		return failf(ex, "scope %q, want the requested pos_integration", m["scope"])
	}
	r.token = token
	return nil
}

func (r *run) tokenWrongSecret() error {
	ex, _ := r.tokenRequest("basic-wrong")
	return status(ex, http.StatusUnauthorized)
}

func (r *run) startBody(terminal string) string {
	return jsonBody(map[string]string{"terminalId": terminal, "posLocationId": r.cfg.Location})
}

// endpoints are the interface's seven endpoints (docs/api.md §1.2), each
// with a well-formed request.
func (r *run) endpoints() []struct{ method, url, body string } {
	loc := r.cfg.Location
	return []struct{ method, url, body string }{
		{http.MethodPost, r.pos("/startInteraction"), r.startBody(r.cfg.Terminal)},
		{http.MethodPost, r.pos("/coupon/couponCode/search"), jsonBody(map[string]string{"email": r.cfg.Email, "posLocationId": loc})},
		{http.MethodPost, r.v2("/coupon/couponCodes/lookup"), jsonBody(map[string]string{"posLocationId": loc, "code": "CONFORMANCE-NO-SUCH-CODE"})},
		{http.MethodPost, r.v2("/loyaltyCard/users/lookup"), jsonBody(map[string]string{"posLocationId": loc, "keyword": "doe"})},
		{http.MethodPost, r.v2("/carousel"), jsonBody(map[string]string{"posLocationId": loc, "terminalId": r.cfg.Terminal})},
		{http.MethodGet, r.pos("/receipt/promotion/location/" + url.PathEscape(loc)), ""},
		{http.MethodPost, r.pos("/company/" + url.PathEscape(r.cfg.Company) + "/import/promotions"), `{"items":[]}`},
	}
}

func (r *run) authRequired() error {
	for _, e := range r.endpoints() {
		ct := ""
		if e.body != "" {
			ct = "application/json"
		}
		ex, _ := r.send(e.method, e.url, ct, e.body, "")
		if err := status(ex, http.StatusUnauthorized); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) invalidToken() error {
	ex, _ := r.send(http.MethodPost, r.pos("/startInteraction"), "application/json", r.startBody(r.cfg.Terminal), "bearer-invalid")
	return status(ex, http.StatusUnauthorized)
}

// interaction starts one and checks its answer; it answers the session id.
func (r *run) interaction(contentType, body string) (string, error) {
	ex, v := r.send(http.MethodPost, r.pos("/startInteraction"), contentType, body, "bearer")
	m, err := okJSON(ex, v, "")
	if err != nil {
		return "", err
	}
	if err := shape(ex, m, map[string]string{"data.terminalId": "string", "data.posLocationId": "string", "data.sessionId": "string", "data.posStatus": posStatuses}); err != nil {
		return "", err
	}
	d := m["data"].(map[string]any)
	switch {
	case d["terminalId"] != r.cfg.Terminal || d["posLocationId"] != r.cfg.Location:
		return "", failf(ex, "the answer does not echo terminalId %q and posLocationId %q", r.cfg.Terminal, r.cfg.Location)
	case !uuidShape.MatchString(d["sessionId"].(string)):
		return "", failf(ex, "sessionId %q is not UUID-shaped", d["sessionId"])
	case d["posStatus"] != "Accepted":
		return "", failf(ex, "posStatus %q at an active terminal, want Accepted", d["posStatus"])
	}
	return d["sessionId"].(string), nil
}

func (r *run) startInteraction() error {
	first, err := r.interaction("application/json", r.startBody(r.cfg.Terminal))
	if err != nil {
		return err
	}
	second, err := r.interaction("application/json", r.startBody(r.cfg.Terminal))
	if err != nil {
		return err
	}
	if first == second {
		return failf(nil, "two interactions answered the same sessionId %q: each starts a session of its own", first)
	}
	return nil
}

func (r *run) unknownTerminal() error {
	ex, _ := r.send(http.MethodPost, r.pos("/startInteraction"), "application/json", r.startBody("CONFORMANCE-UNREGISTERED-TERMINAL"), "bearer")
	return status(ex, http.StatusNotFound)
}

func (r *run) requestTypes() error {
	xml := "<StartInteractionDto><terminalId>" + r.cfg.Terminal + "</terminalId><posLocationId>" + r.cfg.Location + "</posLocationId></StartInteractionDto>"
	for _, tc := range []struct{ ct, body string }{
		{"application/json-patch+json", r.startBody(r.cfg.Terminal)},
		{"text/json", r.startBody(r.cfg.Terminal)},
		{"application/vnd.conformance+json", r.startBody(r.cfg.Terminal)},
		{"application/xml", xml},
		{"text/xml", xml},
		{"application/vnd.conformance+xml", xml},
	} {
		if _, err := r.interaction(tc.ct, tc.body); err != nil {
			f := err.(*failure)
			f.problem = "sent as " + tc.ct + ": " + f.problem
			return f
		}
	}
	return nil
}

func (r *run) couponSearch() error {
	e := r.endpoints()[1]
	ex, v := r.send(e.method, e.url, "application/json", e.body, "bearer")
	m, err := okJSON(ex, v, "")
	if err != nil {
		return err
	}
	if err := shape(ex, m, map[string]string{"data": "array", "page.page": "integer", "page.pageSize": "integer", "page.total": "integer", "posStatus": posStatuses}); err != nil {
		return err
	}
	return each(ex, m, "data", couponShape)
}

func (r *run) couponSearchTypes() error {
	e := r.endpoints()[1]
	for _, accept := range []string{"application/json", "text/json", "text/plain"} {
		ex, v := r.send(e.method, e.url, "application/json", e.body, "bearer", "Accept: "+accept)
		m, err := okJSON(ex, v, accept)
		if err != nil {
			return err
		}
		if err := shape(ex, m, map[string]string{"data": "array", "page": "object", "posStatus": posStatuses}); err != nil {
			return err
		}
	}
	return nil
}

func (r *run) couponLookup() error {
	e := r.endpoints()[2]
	ex, v := r.send(e.method, e.url, "application/json", e.body, "bearer")
	m, err := okJSON(ex, v, "")
	if err != nil {
		return err
	}
	if err := shape(ex, m, map[string]string{"data.couponCodes": "array"}); err != nil {
		return err
	}
	return each(ex, m, "data.couponCodes", couponShape)
}

func (r *run) loyaltyLookup() error {
	e := r.endpoints()[3]
	ex, v := r.send(e.method, e.url, "application/json", e.body, "bearer")
	m, err := okJSON(ex, v, "")
	if err != nil {
		return err
	}
	if err := shape(ex, m, map[string]string{"data.users": "array"}); err != nil {
		return err
	}
	return each(ex, m, "data.users", map[string]string{"id": "string", "firstName": "string?", "lastName": "string?", "gender": "string?",
		"phone": "string?", "email": "string?", "stamps": "integer", "points": "integer"})
}

func (r *run) carousel() error {
	e := r.endpoints()[4]
	ex, v := r.send(e.method, e.url, "application/json", e.body, "bearer")
	m, err := okJSON(ex, v, "")
	if err != nil {
		return err
	}
	return shape(ex, m, map[string]string{"data.url": "string"})
}

func (r *run) receiptPromotion() error {
	e := r.endpoints()[5]
	ex, v := r.send(e.method, e.url, "", "", "bearer")
	m, err := okJSON(ex, v, "")
	if err != nil {
		return err
	}
	return shape(ex, m, map[string]string{"data.primaryText": "string?", "data.secondaryText": "string?", "data.imageUrl": "string?", "data.posStatus": posStatuses})
}

func (r *run) promotionImport() error {
	e := r.endpoints()[6]
	ex, v := r.send(e.method, e.url, "application/json", e.body, "bearer")
	m, err := okJSON(ex, v, "")
	if err != nil {
		return err
	}
	return shape(ex, m, map[string]string{"data.status": "string", "data.createdCount": "integer", "data.updatedCount": "integer",
		"data.errors": "array", "data.warnings": "array"})
}
