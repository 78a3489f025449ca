package portal

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/service"
)

// The webhooks page (docs/api.md §19, §23): a company's endpoints, their
// secrets (shown once, on the page answering the post that made them) and
// deliveries. Endpoints belong to a company, so only the companies the
// person reaches whole are offered: a location manager reaches none.

// webhooksData is the webhooks page's.
type webhooksData struct {
	// Companies are the "posSystemId/posCompanyId" the person reaches
	// whole; Company is the chosen one.
	Companies  []string
	Company    string
	Endpoints  []*posgate.WebhookEndpoint
	EventTypes []string
	Form       url.Values
	// Secret is the endpoint whose secret was just generated, with it.
	Secret *service.WebhookEndpointWithSecret
	// Endpoint is the one whose deliveries are shown (?endpoint=).
	Endpoint   *posgate.WebhookEndpoint
	Deliveries *service.WebhookDeliveryPage
}

// wholeCompanies lists the companies the person reaches whole.
func wholeCompanies(q *request, places []place) []string {
	var out []string
	for _, pl := range places {
		for _, co := range pl.Companies {
			if q.pr.CanSeeCompany(co.POSSystemID, co.ID) {
				out = append(out, co.POSSystemID+"/"+co.ID)
			}
		}
	}
	return out
}

// webhooksPath is the page of a company's endpoints (and of one's
// deliveries when endpoint is not empty).
func webhooksPath(pos, co, endpoint string) string {
	v := url.Values{"company": {pos + "/" + co}}
	if endpoint != "" {
		v.Set("endpoint", endpoint)
	}
	return "/portal/webhooks?" + v.Encode()
}

// webhooks lists a company's endpoints with the form that adds one, and
// the deliveries of the endpoint asked for.
func (p *Portal) webhooks(q *request) error { return p.renderWebhooks(q, http.StatusOK, view{}, nil) }

func (p *Portal) renderWebhooks(q *request, status int, v view, secret *service.WebhookEndpointWithSecret) error {
	places, err := p.reach(q)
	if err != nil {
		return err
	}
	d := webhooksData{Companies: wholeCompanies(q, places), EventTypes: posgate.EventTypes, Form: q.r.PostForm, Secret: secret}
	if secret != nil {
		d.Form = nil
	}
	d.Company = q.r.URL.Query().Get("company")
	if d.Company == "" && q.r.PostForm != nil {
		d.Company = q.r.PostForm.Get("company")
	}
	if d.Company == "" && len(d.Companies) > 0 {
		d.Company = d.Companies[0]
	}
	v.Title, v.Nav = "Webhooks", "webhooks"
	if d.Company == "" {
		if v.Error == "" {
			v.Error = "You reach no company whole: webhook endpoints belong to companies."
		}
		v.Data = d
		return p.render(q, status, "webhooks", v)
	}
	pos, co, _ := strings.Cut(d.Company, "/")
	if d.Endpoints, err = p.svc.ListWebhookEndpoints(q.ctx, q.pr, pos, co); err != nil {
		return err
	}
	if id := q.r.URL.Query().Get("endpoint"); id != "" {
		if d.Endpoint, err = p.svc.FindWebhookEndpoint(q.ctx, q.pr, pos, co, id); err != nil {
			return err
		}
		req := &service.ListWebhookDeliveriesRequest{Status: q.r.URL.Query().Get("status")}
		if n, err := strconv.Atoi(q.r.URL.Query().Get("page")); err == nil {
			req.Page = &n
		}
		if d.Deliveries, err = p.svc.ListWebhookDeliveries(q.ctx, q.pr, pos, co, id, req); err != nil {
			return err
		}
	}
	v.Data = d
	return p.render(q, status, "webhooks", v)
}

// createWebhook registers an endpoint and shows its secret, once: the
// page answers the post itself, so the secret is in no URL.
func (p *Portal) createWebhook(q *request) error {
	f := q.r.PostForm
	pos, co, _ := strings.Cut(f.Get("company"), "/")
	enabled := f.Get("enabled") == "on"
	e, err := p.svc.CreateWebhookEndpoint(q.ctx, q.pr, pos, co, &service.CreateWebhookEndpointRequest{URL: strings.TrimSpace(f.Get("url")),
		EventTypes: f["eventTypes"], Enabled: &enabled})
	if err != nil {
		return p.formError(q, err, func(status int, v view) error { return p.renderWebhooks(q, status, v, nil) })
	}
	q.r.URL.RawQuery = url.Values{"company": {pos + "/" + co}}.Encode()
	return p.renderWebhooks(q, http.StatusCreated, view{Notice: "Endpoint " + e.ID + " added. Copy its secret now: it is shown only this once."}, e)
}

// webhookAction enables, disables, rotates the secret of (shown once),
// tests, redelivers to or removes an endpoint.
func (p *Portal) webhookAction(q *request) error {
	pos, co, id := q.r.PathValue("pos"), q.r.PathValue("company"), q.r.PathValue("endpoint")
	switch action := q.r.PathValue("action"); action {
	case "enable", "disable":
		on := action == "enable"
		if _, err := p.svc.UpdateWebhookEndpoint(q.ctx, q.pr, pos, co, id, &service.UpdateWebhookEndpointRequest{Enabled: &on}); err != nil {
			return err
		}
		return q.redirect(webhooksPath(pos, co, ""), "Endpoint "+id+" is "+action+"d.")
	case "rotate":
		e, err := p.svc.RotateWebhookSecret(q.ctx, q.pr, pos, co, id)
		if err != nil {
			return err
		}
		q.r.URL.RawQuery = url.Values{"company": {pos + "/" + co}}.Encode()
		return p.renderWebhooks(q, http.StatusOK, view{Notice: fmt.Sprintf("Endpoint %s has a new secret; the old one keeps signing beside it for %s. Copy it now: it is shown only this once.",
			id, posgate.SecretRotationOverlap)}, e)
	case "test":
		res, err := p.svc.SendTestWebhook(q.ctx, q.pr, pos, co, id)
		if err != nil {
			return err
		}
		return q.redirect(webhooksPath(pos, co, id), "Test event "+res.EventID+" queued for "+id+".")
	case "redeliver":
		var delivery int64
		if s := q.r.PostForm.Get("delivery"); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n <= 0 {
				return posgate.ValidationError{"delivery": {"The delivery must be a delivery's number."}}.Err()
			}
			delivery = n
		}
		res, err := p.svc.RedeliverWebhooks(q.ctx, q.pr, pos, co, id, delivery)
		if err != nil {
			return err
		}
		return q.redirect(webhooksPath(pos, co, id), fmt.Sprintf("%d dead deliveries of %s are pending again.", res.Redelivered, id))
	case "delete":
		if _, err := p.svc.DeleteWebhookEndpoint(q.ctx, q.pr, pos, co, id); err != nil {
			return err
		}
		return q.redirect(webhooksPath(pos, co, ""), "Endpoint "+id+" removed.")
	}
	return posgate.Errorf(posgate.ENOTFOUND, "There is no such page.")
}

// failingWebhook is an endpoint of the dashboard's "failing webhooks"
// panel: with dead deliveries, or disabled by posgate.
type failingWebhook struct {
	Endpoint *posgate.WebhookEndpoint
	Dead     int
}

// failingWebhooks lists the endpoints within the person's reach (the
// companies reached whole) that have dead deliveries or that posgate
// disabled (a 410 answer), through the same reads as the webhooks page.
func (p *Portal) failingWebhooks(q *request, places []place) ([]failingWebhook, error) {
	var out []failingWebhook
	one := 1
	for _, c := range wholeCompanies(q, places) {
		pos, co, _ := strings.Cut(c, "/")
		eps, err := p.svc.ListWebhookEndpoints(q.ctx, q.pr, pos, co)
		if err != nil {
			return nil, err
		}
		for _, e := range eps {
			page, err := p.svc.ListWebhookDeliveries(q.ctx, q.pr, pos, co, e.ID, &service.ListWebhookDeliveriesRequest{Status: posgate.DeliveryDead, PageSize: &one})
			if err != nil {
				return nil, err
			}
			if page.Page.Total > 0 || e.DisabledReason != "" {
				out = append(out, failingWebhook{Endpoint: e, Dead: page.Page.Total})
			}
		}
	}
	return out, nil
}
