package service

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/webhook/endpoint"
)

// The operator's webhook use cases (docs/api.md §19): a company's
// endpoints, their secrets, their deliveries, under a company p must reach.

// Paging of an endpoint's deliveries.
const (
	DefaultDeliveryPageSize = 50
	MaxDeliveryPageSize     = 500
)

// WebhookEndpointWithSecret is an endpoint as answered when its secret is
// generated (creation, rotation): the only answers that carry it.
type WebhookEndpointWithSecret struct {
	*posgate.WebhookEndpoint
	Secret string `json:"secret,omitempty"`
	// SecretNote stands in for Secret in a replay of that answer (an
	// Idempotency-Key sent again): see WithoutSecret.
	SecretNote string `json:"secretNote,omitempty"`
}

// WithoutSecret is e as kept for replay under an Idempotency-Key
// (docs/api.md §14): no secret, and a note that says how to get a new one.
func (e *WebhookEndpointWithSecret) WithoutSecret() any {
	out := *e
	out.Secret = ""
	out.SecretNote = fmt.Sprintf(msgSecretNotKept, "/admin/v1/pos-systems/"+url.PathEscape(e.POSSystemID)+"/companies/"+
		url.PathEscape(e.CompanyID)+"/webhooks/"+url.PathEscape(e.ID)+"/rotate-secret")
	return &out
}

// CreateWebhookEndpointRequest registers an endpoint; enabled defaults to
// true.
type CreateWebhookEndpointRequest struct {
	URL        string   `json:"url"`
	EventTypes []string `json:"eventTypes"`
	Enabled    *bool    `json:"enabled"`
}

// Validate checks the URL's form and the event types.
func (q *CreateWebhookEndpointRequest) Validate() error {
	v := posgate.ValidationError{}
	if err := posgate.ValidateWebhookURL(q.URL); err != nil {
		v.Add("url", err.Error())
	}
	if err := posgate.ValidateEventTypes(q.EventTypes); err != nil {
		v.Add("eventTypes", err.Error())
	}
	return v.Err()
}

// checkReachable refuses a URL whose host is, or resolves to, an address
// outgoing calls may not reach (endpoint.AddressPolicy): loopback only when
// the instance allows it (--webhooks-allow-loopback).
func (s *Service) checkReachable(ctx context.Context, url string) error {
	if err := endpoint.CheckURL(ctx, url, endpoint.AddressPolicy{AllowLoopback: s.cfg.WebhookAllowLoopback}); err != nil {
		v := posgate.ValidationError{}
		if strings.Contains(err.Error(), "cannot be resolved") {
			v.Add("url", "The url's host cannot be resolved.")
		} else {
			v.Add("url", "The url must reach a public address: private, loopback, link-local and other special-purpose addresses are refused.")
		}
		return v.Err()
	}
	return nil
}

// CreateWebhookEndpoint registers an endpoint with a new secret, shown
// in this answer only.
func (s *Service) CreateWebhookEndpoint(ctx context.Context, p *posgate.Principal, posSystemID, companyID string, req *CreateWebhookEndpointRequest) (*WebhookEndpointWithSecret, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if err := s.checkReachable(ctx, req.URL); err != nil {
		return nil, err
	}
	e := &posgate.WebhookEndpoint{ID: "wh_" + randomID(), POSSystemID: posSystemID, CompanyID: companyID, URL: req.URL,
		EventTypes: req.EventTypes, Enabled: req.Enabled == nil || *req.Enabled, Secret: endpoint.NewSecret()}
	err := s.audited(ctx, p, "webhook-endpoint.create", func(ctx context.Context, ch *change) error {
		ch.target, ch.after = webhookTarget(e), e
		return s.store.CreateWebhookEndpoint(ctx, e)
	})
	if err != nil {
		return nil, err
	}
	return &WebhookEndpointWithSecret{WebhookEndpoint: e, Secret: e.Secret}, nil
}

// ListWebhookEndpoints lists a company's endpoints (without secrets).
func (s *Service) ListWebhookEndpoints(ctx context.Context, p *posgate.Principal, posSystemID, companyID string) ([]*posgate.WebhookEndpoint, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	list, err := s.store.ListWebhookEndpoints(ctx, posSystemID, companyID)
	return nonNil(list), err
}

// FindWebhookEndpoint returns one of a company's endpoints.
func (s *Service) FindWebhookEndpoint(ctx context.Context, p *posgate.Principal, posSystemID, companyID, id string) (*posgate.WebhookEndpoint, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	return s.store.FindWebhookEndpoint(ctx, posSystemID, companyID, id)
}

// UpdateWebhookEndpointRequest changes the fields it gives.
type UpdateWebhookEndpointRequest struct {
	URL        *string  `json:"url"`
	EventTypes []string `json:"eventTypes"`
	Enabled    *bool    `json:"enabled"`
}

// Validate checks the fields given.
func (q *UpdateWebhookEndpointRequest) Validate() error {
	v := posgate.ValidationError{}
	if q.URL != nil {
		if err := posgate.ValidateWebhookURL(*q.URL); err != nil {
			v.Add("url", err.Error())
		}
	}
	if q.EventTypes != nil {
		if err := posgate.ValidateEventTypes(q.EventTypes); err != nil {
			v.Add("eventTypes", err.Error())
		}
	}
	return v.Err()
}

// UpdateWebhookEndpoint changes an endpoint's URL, types or enabled state;
// enabling it clears the reason posgate disabled it for.
func (s *Service) UpdateWebhookEndpoint(ctx context.Context, p *posgate.Principal, posSystemID, companyID, id string, req *UpdateWebhookEndpointRequest) (*posgate.WebhookEndpoint, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.URL != nil {
		if err := s.checkReachable(ctx, *req.URL); err != nil {
			return nil, err
		}
	}
	var e *posgate.WebhookEndpoint
	err := s.audited(ctx, p, "webhook-endpoint.update", func(ctx context.Context, ch *change) error {
		before, err := s.store.FindWebhookEndpoint(ctx, posSystemID, companyID, id)
		if err != nil {
			return err
		}
		after := *before
		if req.URL != nil {
			after.URL = *req.URL
		}
		if req.EventTypes != nil {
			after.EventTypes = req.EventTypes
		}
		if req.Enabled != nil {
			after.Enabled = *req.Enabled
			if after.Enabled {
				after.DisabledReason = ""
			}
		}
		ch.target, ch.before, ch.after, e = webhookTarget(before), before, &after, &after
		return s.store.UpdateWebhookEndpoint(ctx, e)
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// DeleteWebhookEndpoint removes an endpoint and its deliveries, and
// returns it as it was.
func (s *Service) DeleteWebhookEndpoint(ctx context.Context, p *posgate.Principal, posSystemID, companyID, id string) (*posgate.WebhookEndpoint, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	var e *posgate.WebhookEndpoint
	err := s.audited(ctx, p, "webhook-endpoint.delete", func(ctx context.Context, ch *change) error {
		var err error
		if e, err = s.store.FindWebhookEndpoint(ctx, posSystemID, companyID, id); err != nil {
			return err
		}
		ch.target, ch.before = webhookTarget(e), e
		return s.store.DeleteWebhookEndpoint(ctx, posSystemID, companyID, id)
	})
	if err != nil {
		return nil, err
	}
	return e, nil
}

// RotateWebhookSecret gives an endpoint a new secret, shown in this answer
// only; the old one keeps signing beside it for
// posgate.SecretRotationOverlap of real time (the sandbox clock does not
// shorten it).
func (s *Service) RotateWebhookSecret(ctx context.Context, p *posgate.Principal, posSystemID, companyID, id string) (*WebhookEndpointWithSecret, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	var e *posgate.WebhookEndpoint
	err := s.audited(ctx, p, "webhook-endpoint.rotate-secret", func(ctx context.Context, ch *change) error {
		before, err := s.store.FindWebhookEndpoint(ctx, posSystemID, companyID, id)
		if err != nil {
			return err
		}
		after := *before
		// The overlap is for receivers deploying the new secret: real time.
		until := posgate.Timestamp(s.wall().Add(posgate.SecretRotationOverlap))
		after.PreviousSecret, after.PreviousSecretUntil, after.Secret = before.Secret, &until, endpoint.NewSecret()
		ch.target, ch.before, ch.after, e = webhookTarget(before), before, &after, &after
		return s.store.UpdateWebhookEndpoint(ctx, e)
	})
	if err != nil {
		return nil, err
	}
	return &WebhookEndpointWithSecret{WebhookEndpoint: e, Secret: e.Secret}, nil
}

// ListWebhookDeliveriesRequest filters an endpoint's deliveries by status,
// a page at a time.
type ListWebhookDeliveriesRequest struct {
	Status   string
	Page     *int
	PageSize *int
}

// Validate checks the status and the paging.
func (q *ListWebhookDeliveriesRequest) Validate() error {
	v := posgate.ValidationError{}
	switch q.Status {
	case "", posgate.DeliveryPending, posgate.DeliveryDelivered, posgate.DeliveryDead:
	default:
		v.Add("status", "The status must be Pending, Delivered or Dead.")
	}
	checkRange(v, "page", q.Page, 1, MaxCouponPage)
	checkRange(v, "pageSize", q.PageSize, 1, MaxDeliveryPageSize)
	return v.Err()
}

// WebhookDeliveryPage is one page of an endpoint's deliveries, newest
// first.
type WebhookDeliveryPage struct {
	Deliveries []*posgate.WebhookDelivery `json:"deliveries"`
	Page       PageModel                  `json:"page"`
}

// ListWebhookDeliveries pages an endpoint's deliveries, newest first.
func (s *Service) ListWebhookDeliveries(ctx context.Context, p *posgate.Principal, posSystemID, companyID, id string, req *ListWebhookDeliveriesRequest) (*WebhookDeliveryPage, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if _, err := s.store.FindWebhookEndpoint(ctx, posSystemID, companyID, id); err != nil {
		return nil, err
	}
	page, size := intOr(req.Page, 1), intOr(req.PageSize, DefaultDeliveryPageSize)
	list, total, err := s.store.ListWebhookDeliveries(ctx, posgate.WebhookDeliveryQuery{POSSystemID: posSystemID, CompanyID: companyID,
		EndpointID: id, Status: req.Status, Offset: (page - 1) * size, Limit: size})
	if err != nil {
		return nil, err
	}
	return &WebhookDeliveryPage{Deliveries: nonNil(list), Page: PageModel{Page: page, PageSize: size, Total: total}}, nil
}

// RedeliverResult says how many dead deliveries were made Pending again.
type RedeliverResult struct {
	Redelivered int `json:"redelivered"`
}

// RedeliverWebhooks makes an endpoint's dead deliveries Pending and due
// now: the one numbered deliveryID, or every dead one when it is 0. A
// numbered delivery that is absent or not dead is ENOTFOUND.
func (s *Service) RedeliverWebhooks(ctx context.Context, p *posgate.Principal, posSystemID, companyID, id string, deliveryID int64) (*RedeliverResult, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	var n int
	err := s.audited(ctx, p, "webhook-endpoint.redeliver", func(ctx context.Context, ch *change) error {
		e, err := s.store.FindWebhookEndpoint(ctx, posSystemID, companyID, id)
		if err != nil {
			return err
		}
		if n, err = s.store.RedeliverWebhooks(ctx, posSystemID, companyID, id, deliveryID, posgate.Timestamp(s.now())); err != nil {
			return err
		}
		if n == 0 && deliveryID != 0 {
			return posgate.NotFound("dead webhook delivery", strconv.FormatInt(deliveryID, 10))
		}
		ch.target, ch.after = webhookTarget(e), map[string]any{"deliveryId": deliveryID, "redelivered": n}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &RedeliverResult{Redelivered: n}, nil
}

// TestEventResult names the test event sent.
type TestEventResult struct {
	EventID string `json:"eventId"`
}

// SendTestWebhook sends a webhook.test event to one endpoint (enabled or
// not: it is delivered once the endpoint is enabled).
func (s *Service) SendTestWebhook(ctx context.Context, p *posgate.Principal, posSystemID, companyID, id string) (*TestEventResult, error) {
	if _, err := s.operatorCompany(ctx, p, posSystemID, companyID); err != nil {
		return nil, err
	}
	var eventID string
	err := s.audited(ctx, p, "webhook-endpoint.test", func(ctx context.Context, ch *change) error {
		e, err := s.store.FindWebhookEndpoint(ctx, posSystemID, companyID, id)
		if err != nil {
			return err
		}
		now := posgate.Timestamp(s.now())
		ev := &posgate.Event{Type: posgate.EventTest, POSSystemID: posSystemID, CompanyID: companyID, Time: now,
			Data: map[string]string{"posSystemId": posSystemID, "posCompanyId": companyID, "endpointId": e.ID}}
		if eventID, err = s.store.EmitTestEvent(ctx, e, ev); err != nil {
			return err
		}
		ch.target, ch.after = webhookTarget(e), map[string]string{"eventId": eventID}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &TestEventResult{EventID: eventID}, nil
}

// webhookTarget is an endpoint as the audit log names it (docs/api.md §22).
func webhookTarget(e *posgate.WebhookEndpoint) posgate.AuditTarget {
	return companyTarget("webhook-endpoint", e.ID, e.POSSystemID, e.CompanyID)
}
