package portal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// funcs are the templates' helpers.
var funcs = template.FuncMap{
	"imageSrc": imageSrc,
	"when": func(v any) string {
		var t time.Time
		switch x := v.(type) {
		case time.Time:
			t = x
		case *time.Time:
			if x != nil {
				t = *x
			}
		}
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"pretty": func(b json.RawMessage) string {
		var out bytes.Buffer
		if len(b) == 0 || json.Indent(&out, b, "", "  ") != nil {
			return string(b)
		}
		return out.String()
	},
	"join":       func(xs []string) string { return strings.Join(xs, ", ") },
	"validities": validitiesText,
	"field": func(fields map[string][]string, name string) string {
		return strings.Join(fields[name], " ")
	},
	"chart": func(hours []hourCount) (string, error) {
		b, err := json.Marshal(hours)
		return string(b), err
	},
	"checked": func(f url.Values, key, v string) bool { return slices.Contains(f[key], v) },
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	},
}

// place is a POS system with the companies and locations a person reaches
// in it.
type place struct {
	POS       *posgate.POSSystem
	Companies []*posgate.Company
	Locations []*posgate.Location
}

// reach lists what the principal reaches, POS system by POS system.
func (p *Portal) reach(q *request) ([]place, error) {
	systems, err := p.svc.ListPOSSystems(q.ctx, q.pr)
	if err != nil {
		return nil, err
	}
	out := make([]place, 0, len(systems))
	for _, ps := range systems {
		cos, err := p.svc.ListCompanies(q.ctx, q.pr, ps.ID)
		if err != nil {
			return nil, err
		}
		locs, err := p.svc.ListLocations(q.ctx, q.pr, ps.ID, "")
		if err != nil {
			return nil, err
		}
		out = append(out, place{POS: ps, Companies: cos, Locations: locs})
	}
	return out, nil
}

// hourCount is one bar of a chart: an hour (UTC) and its count.
type hourCount struct {
	Label string `json:"label"`
	Count int    `json:"count"`
}

// companyStats is a company's part of the dashboard.
type companyStats struct {
	Company      *posgate.Company
	Transactions []hourCount
	Interactions []hourCount
	Total        int
	TotalIn      int
	Locations    int
}

// dashboardData is the dashboard's.
type dashboardData struct {
	Places    []place
	Companies []companyStats
	Terminals map[string]int // by status
	Recent    []*posgate.AuditEntry
	// Failing are the endpoints with dead deliveries or disabled by
	// posgate.
	Failing []failingWebhook
	// Imports are the newest finished imports in reach (the import log,
	// docs/api.md §23), newest first.
	Imports []*posgate.ImportRecord
}

// dashboard shows interactions and transactions per hour of the last 24
// hours for every company the person reaches, the terminals by status and
// the latest changes they may see.
func (p *Portal) dashboard(q *request) error {
	places, err := p.reach(q)
	if err != nil {
		return err
	}
	d := dashboardData{Places: places, Terminals: map[string]int{}}
	now := p.cfg.Now().UTC().Truncate(time.Hour)
	from := now.Add(-23 * time.Hour)
	size := service.MaxTransactionPageSize
	for _, pl := range places {
		for _, co := range pl.Companies {
			st := companyStats{Company: co}
			for _, l := range pl.Locations {
				if l.CompanyID == co.ID {
					st.Locations++
				}
			}
			page, err := p.svc.ListTransactions(q.ctx, q.pr, pl.POS.ID, co.ID, &service.ListTransactionsRequest{PageSize: &size})
			if err != nil {
				return err
			}
			counts := make([]int, 24)
			for _, t := range page.Transactions {
				h := t.Date.UTC().Truncate(time.Hour)
				if i := int(h.Sub(from) / time.Hour); !h.Before(from) && i < 24 {
					counts[i]++
					st.Total++
				}
			}
			for i, c := range counts {
				st.Transactions = append(st.Transactions, hourCount{Label: from.Add(time.Duration(i) * time.Hour).Format("15"), Count: c})
			}
			hours, err := p.svc.InteractionsPerHour(q.ctx, q.pr, pl.POS.ID, co.ID, from, now.Add(time.Hour))
			if err != nil {
				return err
			}
			for i := range 24 {
				h := from.Add(time.Duration(i) * time.Hour)
				st.Interactions = append(st.Interactions, hourCount{Label: h.Format("15"), Count: hours[h]})
				st.TotalIn += hours[h]
			}
			d.Companies = append(d.Companies, st)
		}
		for _, l := range pl.Locations {
			terms, err := p.svc.ListTerminals(q.ctx, q.pr, pl.POS.ID, l.ID)
			if err != nil {
				return err
			}
			for _, t := range terms {
				d.Terminals[string(t.Status)]++
			}
		}
	}
	five := 8
	recent, err := p.svc.ListAudit(q.ctx, q.pr, &service.ListAuditRequest{PageSize: &five})
	if err != nil {
		return err
	}
	if d.Recent, err = p.withEmails(q, recent.Entries); err != nil {
		return err
	}
	if d.Failing, err = p.failingWebhooks(q, places); err != nil {
		return err
	}
	if d.Imports, err = p.recentImports(q, places); err != nil {
		return err
	}
	return p.render(q, http.StatusOK, "dashboard", view{Title: "Dashboard", Nav: "dashboard", Data: d})
}

// locationTerminals is a location with its terminals.
type locationTerminals struct {
	Location  *posgate.Location
	Terminals []*posgate.Terminal
}

// terminalsData is the terminals page's: every location reached, and the
// register form as sent.
type terminalsData struct {
	Locations []locationTerminals
	Form      url.Values
}

// terminals lists the terminals of every location the person reaches,
// with the register form.
func (p *Portal) terminals(q *request) error { return p.renderTerminals(q, http.StatusOK, view{}) }

func (p *Portal) renderTerminals(q *request, status int, v view) error {
	places, err := p.reach(q)
	if err != nil {
		return err
	}
	d := terminalsData{Form: q.r.PostForm}
	for _, pl := range places {
		for _, l := range pl.Locations {
			terms, err := p.svc.ListTerminals(q.ctx, q.pr, pl.POS.ID, l.ID)
			if err != nil {
				return err
			}
			d.Locations = append(d.Locations, locationTerminals{Location: l, Terminals: terms})
		}
	}
	v.Title, v.Nav, v.Data = "Terminals", "terminals", d
	return p.render(q, status, "terminals", v)
}

// registerTerminal registers a terminal at a location (the form's
// "location" is "posSystemId/locationId").
func (p *Portal) registerTerminal(q *request) error {
	f := q.r.PostForm
	pos, loc, _ := strings.Cut(f.Get("location"), "/")
	id := strings.TrimSpace(f.Get("terminalId"))
	t, err := p.svc.CreateTerminal(q.ctx, q.pr, pos, loc, &service.CreateTerminalRequest{ID: id, Name: strings.TrimSpace(f.Get("name"))})
	if err != nil {
		if posgate.ErrorCode(err) == posgate.ENOTFOUND && loc == "" {
			err = posgate.ValidationError{"location": {"Choose the location of the terminal."}}.Err()
		}
		return p.formError(q, err, func(status int, v view) error { return p.renderTerminals(q, status, v) })
	}
	return q.redirect("/portal/terminals", fmt.Sprintf("Terminal %s registered at %s.", t.ID, t.LocationID))
}

// setTerminalStatus enables or disables a terminal.
func (p *Portal) setTerminalStatus(q *request) error {
	status := posgate.StatusActive
	switch q.r.PathValue("action") {
	case "enable":
	case "disable":
		status = posgate.StatusDisabled
	default:
		return posgate.Errorf(posgate.ENOTFOUND, "There is no such page.")
	}
	pos, loc, id := q.r.PathValue("pos"), q.r.PathValue("location"), q.r.PathValue("terminal")
	t, err := p.svc.SetTerminalStatus(q.ctx, q.pr, pos, loc, id, status)
	if err != nil {
		return err
	}
	back := "/portal/terminals"
	if q.r.PostForm.Get("back") == "location" {
		back = "/portal/locations/" + url.PathEscape(pos) + "/" + url.PathEscape(loc)
	}
	return q.redirect(back, fmt.Sprintf("Terminal %s is %s.", t.ID, t.Status))
}

// location shows one location and its terminals; one the person does not
// reach is as absent as an unknown one (404).
func (p *Portal) location(q *request) error { return p.renderLocation(q, http.StatusOK, view{}) }

func (p *Portal) renderLocation(q *request, status int, v view) error {
	pos, id := q.r.PathValue("pos"), q.r.PathValue("location")
	l, err := p.svc.FindLocation(q.ctx, q.pr, pos, id)
	if err != nil {
		return err
	}
	terms, err := p.svc.ListTerminals(q.ctx, q.pr, pos, id)
	if err != nil {
		return err
	}
	v.Title, v.Nav, v.Data = "Location "+l.ID, "terminals", locationTerminals{Location: l, Terminals: terms}
	return p.render(q, status, "location", v)
}

// updateLocation sets the location's name and time zone ("" removes it:
// the company's applies).
func (p *Portal) updateLocation(q *request) error {
	pos, id := q.r.PathValue("pos"), q.r.PathValue("location")
	f := q.r.PostForm
	req := &service.UpdateLocationRequest{}
	if name := strings.TrimSpace(f.Get("name")); name != "" {
		req.Name = &name
	}
	if f.Has("timeZone") {
		zone := strings.TrimSpace(f.Get("timeZone"))
		req.TimeZone = &zone
	}
	if _, err := p.svc.UpdateLocation(q.ctx, q.pr, pos, id, req); err != nil {
		return p.formError(q, err, func(status int, v view) error { return p.renderLocation(q, status, v) })
	}
	return q.redirect("/portal/locations/"+url.PathEscape(pos)+"/"+url.PathEscape(id), "Location saved.")
}

// companyData is the company page's.
type companyData struct {
	Company   *posgate.Company
	Locations []*posgate.Location
	Program   *posgate.LoyaltyProgram
}

// company shows a company with its feature switches (a form) and
// locations.
func (p *Portal) company(q *request) error { return p.renderCompany(q, http.StatusOK, view{}) }

func (p *Portal) renderCompany(q *request, status int, v view) error {
	pos, id := q.r.PathValue("pos"), q.r.PathValue("company")
	co, err := p.svc.FindCompany(q.ctx, q.pr, pos, id)
	if err != nil {
		return err
	}
	locs, err := p.svc.ListLocations(q.ctx, q.pr, pos, id)
	if err != nil {
		return err
	}
	prog, err := p.svc.FindLoyaltyProgram(q.ctx, q.pr, pos, id)
	if err != nil && posgate.ErrorCode(err) != posgate.ENOTFOUND {
		return err
	}
	v.Title, v.Nav, v.Data = "Company "+co.Name, "dashboard", companyData{Company: co, Locations: locs, Program: prog}
	return p.render(q, status, "company", v)
}

// updateCompany sets the company's name, time zone and feature switches.
func (p *Portal) updateCompany(q *request) error {
	pos, id := q.r.PathValue("pos"), q.r.PathValue("company")
	f := q.r.PostForm
	on := func(name string) *bool { b := f.Get(name) == "on"; return &b }
	name := strings.TrimSpace(f.Get("name"))
	req := &service.UpdateCompanyRequest{Features: &service.FeaturePatch{Coupons: on("coupons"), ReceiptPromotion: on("receiptPromotion"),
		Carousel: on("carousel"), PromotionImport: on("promotionImport"), Transactions: on("transactions"), ProductsImport: on("productsImport")}}
	if name != "" {
		req.Name = &name
	}
	if f.Has("timeZone") {
		zone := strings.TrimSpace(f.Get("timeZone"))
		req.TimeZone = &zone
	}
	if _, err := p.svc.UpdateCompany(q.ctx, q.pr, pos, id, req); err != nil {
		return p.formError(q, err, func(status int, v view) error { return p.renderCompany(q, status, v) })
	}
	return q.redirect("/portal/companies/"+url.PathEscape(pos)+"/"+url.PathEscape(id), "Company saved.")
}

// auditData is the audit page's.
type auditData struct {
	Entries []*posgate.AuditEntry
	Filter  url.Values
	Older   string // the query of the next (older) page; "" on the last
}

// audit lists the audit log as far as the person reaches, newest first,
// filtered by the query.
func (p *Portal) audit(q *request) error {
	f := q.r.URL.Query()
	size := 50
	actor := strings.TrimSpace(f.Get("actor"))
	if strings.Contains(actor, "@") {
		// "Who" shows people by e-mail: a filter by e-mail is by the
		// person's id.
		if person, err := p.svc.FindPerson(q.ctx, q.pr, actor); err == nil {
			actor = person.ID
		}
	}
	page, err := p.svc.ListAudit(q.ctx, q.pr, &service.ListAuditRequest{Actor: actor, Action: f.Get("action"),
		TargetType: f.Get("targetType"), TargetID: f.Get("targetId"), LocationID: f.Get("location"), Cursor: f.Get("cursor"), PageSize: &size})
	if err != nil {
		return err
	}
	d := auditData{Filter: f}
	if d.Entries, err = p.withEmails(q, page.Entries); err != nil {
		return err
	}
	if page.NextCursor != nil {
		older := url.Values{}
		for k, vs := range f {
			older[k] = vs
		}
		older.Set("cursor", *page.NextCursor)
		older.Del("done")
		d.Older = older.Encode()
	}
	return p.render(q, http.StatusOK, "audit", view{Title: "Audit log", Nav: "audit", Data: d})
}

// withEmails returns entries with each person's id (the actor's subject)
// replaced by the person's e-mail address, so that "Who" names a person as
// the person signs in; an entry is copied, not changed. A person the reader
// may not see (service.FindPerson), or no longer registered, keeps the id.
func (p *Portal) withEmails(q *request, entries []*posgate.AuditEntry) ([]*posgate.AuditEntry, error) {
	emails := map[string]string{q.person.ID: q.person.Email}
	out := make([]*posgate.AuditEntry, len(entries))
	for i, e := range entries {
		out[i] = e
		if e.Actor.Kind != posgate.ActorPerson {
			continue
		}
		email, ok := emails[e.Actor.Subject]
		if !ok {
			person, err := p.svc.FindPerson(q.ctx, q.pr, e.Actor.Subject)
			switch posgate.ErrorCode(err) {
			case "":
				email = person.Email
			case posgate.ENOTFOUND, posgate.EFORBIDDEN:
			default:
				return nil, err
			}
			emails[e.Actor.Subject] = email
		}
		if email != "" {
			c := *e
			c.Actor.Subject = email
			out[i] = &c
		}
	}
	return out, nil
}

// peopleData is the people page's.
type peopleData struct {
	People []*service.PersonView
	Places []place
	Roles  []posgate.Role
	Form   url.Values
}

// people lists the people within the person's reach, with the form that
// adds one.
func (p *Portal) people(q *request) error { return p.renderPeople(q, http.StatusOK, view{}) }

func (p *Portal) renderPeople(q *request, status int, v view) error {
	list, err := p.svc.ListPeople(q.ctx, q.pr)
	if err != nil {
		return err
	}
	places, err := p.reach(q)
	if err != nil {
		return err
	}
	v.Title, v.Nav, v.Data = "People", "people", peopleData{People: list, Places: places, Roles: service.CreatableRoles(q.pr), Form: q.r.PostForm}
	return p.render(q, status, "people", v)
}

// createPerson adds a person.
func (p *Portal) createPerson(q *request) error {
	f := q.r.PostForm
	req := &service.CreatePersonRequest{Email: f.Get("email"), Name: strings.TrimSpace(f.Get("name")), Password: f.Get("password"),
		Role: posgate.Role(f.Get("role")), POSSystemID: strings.TrimSpace(f.Get("posSystemId")),
		CompanyIDs: list(f.Get("companyIds")), LocationIDs: list(f.Get("locationIds"))}
	person, err := p.svc.CreatePerson(q.ctx, q.pr, req)
	if err != nil {
		return p.formError(q, err, func(status int, v view) error { return p.renderPeople(q, status, v) })
	}
	return q.redirect("/portal/people", fmt.Sprintf("%s can sign in now.", person.Email))
}

// setPersonDisabled disables or enables a person.
func (p *Portal) setPersonDisabled(q *request) error {
	var disabled bool
	switch q.r.PathValue("action") {
	case "enable":
	case "disable":
		disabled = true
	default:
		return posgate.Errorf(posgate.ENOTFOUND, "There is no such page.")
	}
	person, err := p.svc.SetPersonDisabled(q.ctx, q.pr, q.r.PathValue("person"), disabled)
	if err != nil {
		return err
	}
	what := "enabled"
	if disabled {
		what = "disabled"
	}
	return q.redirect("/portal/people", fmt.Sprintf("%s is %s.", person.Email, what))
}

// clientsData is the API clients page's.
type clientsData struct {
	Clients []*service.ClientView
	Scopes  []string
	Form    url.Values
	// Created is the client just created, with its secret, shown once.
	Created *service.ClientView
}

// clients lists the API clients (the whole installation's: an admin's
// page), with the form that creates one.
func (p *Portal) clients(q *request) error { return p.renderClients(q, http.StatusOK, view{}, nil) }

func (p *Portal) renderClients(q *request, status int, v view, created *service.ClientView) error {
	list, err := p.svc.ListClients(q.ctx, q.pr)
	if err != nil {
		return err
	}
	form := q.r.PostForm
	if created != nil {
		form = nil
	}
	v.Title, v.Nav = "API clients", "clients"
	v.Data = clientsData{Clients: list, Scopes: []string{posgate.ScopePOSIntegration, posgate.ScopeServiceAPI, posgate.ScopeAdmin}, Form: form, Created: created}
	return p.render(q, status, "clients", v)
}

// createClient creates an API client and shows its secret, once: the page
// answers the post itself rather than redirecting, so that the secret is
// in no URL and no history entry.
func (p *Portal) createClient(q *request) error {
	f := q.r.PostForm
	c, err := p.svc.CreateClient(q.ctx, q.pr, &service.CreateClientRequest{ID: strings.TrimSpace(f.Get("clientId")), Name: strings.TrimSpace(f.Get("name")),
		POSSystemID: strings.TrimSpace(f.Get("posSystemId")), Scopes: f["scopes"], CompanyIDs: list(f.Get("companyIds"))})
	if err != nil {
		return p.formError(q, err, func(status int, v view) error { return p.renderClients(q, status, v, nil) })
	}
	return p.renderClients(q, http.StatusCreated, view{Notice: "Client " + c.ID + " created. Copy its secret now: it is shown only this once."}, c)
}

// setClientDisabled disables or enables an API client, or rotates its
// secret (shown once, on the page answering the post, as on creation).
func (p *Portal) setClientDisabled(q *request) error {
	var disabled bool
	switch q.r.PathValue("action") {
	case "enable":
	case "disable":
		disabled = true
	case "rotate":
		c, err := p.svc.RotateClientSecret(q.ctx, q.pr, q.r.PathValue("client"))
		if err != nil {
			return err
		}
		return p.renderClients(q, http.StatusOK, view{Notice: "Client " + c.ID + " has a new secret; the old one no longer works. Copy it now: it is shown only this once."}, c)
	default:
		return posgate.Errorf(posgate.ENOTFOUND, "There is no such page.")
	}
	c, err := p.svc.SetClientDisabled(q.ctx, q.pr, q.r.PathValue("client"), disabled)
	if err != nil {
		return err
	}
	what := "enabled"
	if disabled {
		what = "disabled"
	}
	return q.redirect("/portal/clients", fmt.Sprintf("Client %s is %s.", c.ID, what))
}

// list splits a comma-separated form field, dropping blanks.
func list(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// dashboardImports is how many imports the dashboard's "recent imports"
// panel shows.
const dashboardImports = 10

// recentImports is the newest dashboardImports imports of every POS
// system reached, merged newest first. The service decides the reach (a
// location manager sees none: imports are company-wide).
func (p *Portal) recentImports(q *request, places []place) ([]*posgate.ImportRecord, error) {
	var out []*posgate.ImportRecord
	for _, pl := range places {
		list, err := p.svc.ListImports(q.ctx, q.pr, pl.POS.ID, dashboardImports)
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FinishedAt.After(out[j].FinishedAt) })
	return out[:min(len(out), dashboardImports)], nil
}

// validitiesText says when a promotion applies, for its row in the
// catalogue page: each validity's period and recurrence, with "local" for
// wall-clock times (the location's time zone, docs/api.md §9.1) and "UTC"
// for instants.
func validitiesText(vs []posgate.PromotionValidity) string {
	if len(vs) == 0 {
		return "always"
	}
	at := func(p *posgate.PromotionTime, open string) string {
		if p == nil {
			return open
		}
		if p.IsWall() {
			return p.Time().Format("2006-01-02 15:04") + " local"
		}
		return p.Time().Format("2006-01-02 15:04") + " UTC"
	}
	clock := func(p *posgate.PromotionTime) string {
		if p == nil {
			return ""
		}
		return p.Time().Format("15:04")
	}
	parts := make([]string, 0, len(vs))
	for _, v := range vs {
		text := "from " + at(v.StartDate, "the start") + " to " + at(v.EndDate, "no end")
		if r := v.Recurrence; r != nil {
			days := "every day"
			if len(r.DaysOfWeek) > 0 {
				days = strings.Join(r.DaysOfWeek, ", ")
			}
			text += ", " + days
			if from, to := clock(r.StartDate), clock(r.EndDate); from != "" && to != "" && from != to {
				zone := " UTC"
				if r.StartDate.IsWall() {
					zone = " local"
				}
				text += " " + from + "–" + to + zone
			}
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "; ")
}
