package service

import (
	"context"
	"net/url"

	"github.com/posgate/posgate"
)

// AccountStatus is the state of a company as the settings lookup reports it
// (docs/api.md §15.1).
type AccountStatus string

// Account statuses. AccountNotFound stands for a company that is unknown
// and for one hidden from the client alike (docs/api.md §3.7): the two must
// not be told apart.
const (
	AccountActive   AccountStatus = "Active"
	AccountDisabled AccountStatus = "Disabled"
	AccountNotFound AccountStatus = "AccountNotFound"
)

// Notification channels and statuses of the settings lookup: a company
// with an enabled webhook endpoint answers NotificationsActive on
// ChannelWebhook, any other NotificationsDisabled on ChannelNone.
const (
	ChannelNone           = "None"
	ChannelWebhook        = "Webhook"
	NotificationsActive   = "Active"
	NotificationsDisabled = "Disabled"
)

// SettingsLookupRequest is the settings lookup's request (docs/api.md
// §15.1): a body on POST, the query parameter on GET.
type SettingsLookupRequest struct {
	PosCompanyID *string `json:"posCompanyId"`
}

// Validate requires posCompanyId, an id as operators register them
// (docs/api.md §1.4): a value that could never name a company is a mistake
// of the caller, not an unknown account.
func (q *SettingsLookupRequest) Validate() error {
	v := posgate.ValidationError{}
	required(v, "posCompanyId", q.PosCompanyID)
	if given(q.PosCompanyID) && !posgate.ValidKey(*q.PosCompanyID) {
		v.Add("posCompanyId", posgate.KeyMessage("posCompanyId"))
	}
	return v.Err()
}

// CompanySettings are the switches a POS reads to decide which of its
// features to offer at a company; each says whether posgate serves that
// feature to the company now (docs/decisions.md, "Settings lookup").
type CompanySettings struct {
	IsCheckInMenuEnabled      bool `json:"isCheckInMenuEnabled"`
	IsTransactionsEnabled     bool `json:"isTransactionsEnabled"`
	IsPosRulesEnabled         bool `json:"isPosRulesEnabled"`
	IsReceiptPromotionEnabled bool `json:"isReceiptPromotionEnabled"`
	IsCouponsEnabled          bool `json:"isCouponsEnabled"`
	IsProductsImportEnabled   bool `json:"isProductsImportEnabled"`
	IsCarouselEnabled         bool `json:"isCarouselEnabled"`
	IsPromotionImportEnabled  bool `json:"isPromotionImportEnabled"`
}

// NotificationSettings say how posgate tells the POS's back office about
// events. Configuration is an object whose content depends on the channel;
// it is empty on ChannelNone.
type NotificationSettings struct {
	Status        string         `json:"status"`
	Channel       string         `json:"channel"`
	Configuration map[string]any `json:"configuration"`
}

// Settings is the settings lookup's answer.
type Settings struct {
	PosCompanyID         string               `json:"posCompanyId"`
	AccountStatus        AccountStatus        `json:"accountStatus"`
	CompanySettings      CompanySettings      `json:"companySettings"`
	NotificationSettings NotificationSettings `json:"notificationSettings"`
}

// LookupSettings answers which features posgate serves to a company of
// the POS system. An unknown company, or one p is restricted away from, is
// AccountNotFound rather than a 404: the POS asks about an account, and
// "no such account" is an answer it acts on (by not offering posgate's
// features there). A disabled company is Disabled with every switch off,
// since no endpoint serves it.
func (s *Service) LookupSettings(ctx context.Context, p *posgate.Principal, posSystemID string, req *SettingsLookupRequest) (*Settings, error) {
	if err := s.AuthorizePOS(p, posSystemID); err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	out := &Settings{PosCompanyID: *req.PosCompanyID, AccountStatus: AccountNotFound,
		NotificationSettings: NotificationSettings{Status: NotificationsDisabled, Channel: ChannelNone, Configuration: map[string]any{}}}
	if !p.CanSeeCompany(posSystemID, *req.PosCompanyID) {
		return out, nil
	}
	var c *posgate.Company
	var err error
	if cf, ok := s.store.(posCompanyFinder); ok {
		c, err = cf.FindPOSCompany(ctx, posSystemID, *req.PosCompanyID)
	} else {
		c, err = s.store.FindCompany(ctx, posSystemID, *req.PosCompanyID)
	}
	switch {
	case posgate.ErrorCode(err) == posgate.ENOTFOUND:
		return out, nil
	case err != nil:
		return nil, err
	case c.Status != posgate.StatusActive:
		out.AccountStatus = AccountDisabled
		return out, nil
	}
	out.AccountStatus = AccountActive
	// The tills' channel (docs/api.md §25), for any of the company's
	// terminals.
	out.NotificationSettings.Configuration["terminalEvents"] = s.cfg.BaseURL + "/pos/" + url.PathEscape(posSystemID) +
		"/location/{posLocationId}/terminal/{terminalId}/events"
	f := c.Features
	out.CompanySettings = CompanySettings{
		// The check-in is startInteraction (docs/api.md §4.1), which the
		// transactions switch governs.
		IsCheckInMenuEnabled:      f.Transactions,
		IsTransactionsEnabled:     f.Transactions,
		IsReceiptPromotionEnabled: f.ReceiptPromotion,
		IsCouponsEnabled:          f.Coupons,
		IsCarouselEnabled:         f.Carousel,
		IsPromotionImportEnabled:  f.PromotionImport,
		IsProductsImportEnabled:   f.ProductsImport,
		// POS rules are not served by posgate: false, whatever the
		// switches.
	}
	// A company with an enabled webhook endpoint is notified by webhook
	// (docs/api.md §19.5).
	hooked, err := s.store.HasEnabledWebhook(ctx, posSystemID, c.ID)
	if err != nil {
		return nil, err
	}
	if hooked {
		out.NotificationSettings.Status, out.NotificationSettings.Channel = NotificationsActive, ChannelWebhook
	}
	return out, nil
}

// posCompanyFinder is implemented by a store with a lookup cache
// (internal/storecache): a company the caller may see, cached for
// --cache-ttl like the tenancy lookups. Only LookupSettings uses it; the
// operator routes read the company from the store (see
// visibleLocationFinder for why a cache must not answer hidden objects).
type posCompanyFinder interface {
	FindPOSCompany(ctx context.Context, posSystemID, companyID string) (*posgate.Company, error)
}
