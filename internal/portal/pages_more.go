package portal

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/importfile"
	"github.com/posgate/posgate/internal/service"
)

// placesData is the places page's: POS systems, companies and locations.
type placesData struct {
	Places []place
	Form   url.Values
}

// places lists the POS systems, companies and locations the person
// reaches, with the forms that add them.
func (p *Portal) places(q *request) error { return p.renderPlaces(q, http.StatusOK, view{}) }

func (p *Portal) renderPlaces(q *request, status int, v view) error {
	places, err := p.reach(q)
	if err != nil {
		return err
	}
	v.Title, v.Nav, v.Data = "Places", "places", placesData{Places: places, Form: q.r.PostForm}
	return p.render(q, status, "places", v)
}

func (p *Portal) placesError(q *request, err error) error {
	return p.formError(q, err, func(status int, v view) error { return p.renderPlaces(q, status, v) })
}

// createPOSSystem registers a POS system (an admin's).
func (p *Portal) createPOSSystem(q *request) error {
	f := q.r.PostForm
	ps, err := p.svc.CreatePOSSystem(q.ctx, q.pr, &service.CreatePOSSystemRequest{ID: strings.TrimSpace(f.Get("id")), Name: strings.TrimSpace(f.Get("name"))})
	if err != nil {
		return p.placesError(q, err)
	}
	return q.redirect("/portal/places", "POS system "+ps.ID+" registered.")
}

// createCompany registers a company of a POS system.
func (p *Portal) createCompany(q *request) error {
	f := q.r.PostForm
	co, err := p.svc.CreateCompany(q.ctx, q.pr, strings.TrimSpace(f.Get("posSystemId")),
		&service.CreateCompanyRequest{ID: strings.TrimSpace(f.Get("posCompanyId")), Name: strings.TrimSpace(f.Get("name")),
			TimeZone: strings.TrimSpace(f.Get("timeZone"))})
	if err != nil {
		return p.placesError(q, err)
	}
	return q.redirect("/portal/places", "Company "+co.ID+" registered.")
}

// createLocation registers a location of a company (the form's "company"
// is "posSystemId/posCompanyId").
func (p *Portal) createLocation(q *request) error {
	f := q.r.PostForm
	pos, co, _ := strings.Cut(f.Get("company"), "/")
	l, err := p.svc.CreateLocation(q.ctx, q.pr, pos, &service.CreateLocationRequest{ID: strings.TrimSpace(f.Get("posLocationId")),
		CompanyID: co, Name: strings.TrimSpace(f.Get("name")), TimeZone: strings.TrimSpace(f.Get("timeZone"))})
	if err != nil {
		if pos == "" {
			err = posgate.ValidationError{"company": {"Choose the company of the location."}}.Err()
		}
		return p.placesError(q, err)
	}
	return q.redirect("/portal/places", "Location "+l.ID+" registered.")
}

// setLocationStatus enables or disables a location.
func (p *Portal) setLocationStatus(q *request) error {
	status := posgate.StatusActive
	switch q.r.PathValue("action") {
	case "enable":
	case "disable":
		status = posgate.StatusDisabled
	default:
		return posgate.Errorf(posgate.ENOTFOUND, "There is no such page.")
	}
	l, err := p.svc.UpdateLocation(q.ctx, q.pr, q.r.PathValue("pos"), q.r.PathValue("location"), &service.UpdateLocationRequest{Status: &status})
	if err != nil {
		return err
	}
	return q.redirect("/portal/places", fmt.Sprintf("Location %s is %s.", l.ID, l.Status))
}

// putLoyaltyProgram sets a company's loyalty program.
func (p *Portal) putLoyaltyProgram(q *request) error {
	pos, id := q.r.PathValue("pos"), q.r.PathValue("company")
	f := q.r.PostForm
	v := posgate.ValidationError{}
	amount := func(field string) *posgate.Amount {
		a, err := posgate.ParseAmount(strings.TrimSpace(f.Get(field)))
		if err != nil {
			v.Add(field, "The "+field+" field must be an amount such as 1 or 2.50.")
			return nil
		}
		return &a
	}
	req := &service.PutLoyaltyProgramRequest{PointsPerCurrencyUnit: amount("pointsPerCurrencyUnit"), MinimumAmountForStamp: amount("minimumAmountForStamp")}
	if n, err := strconv.ParseInt(strings.TrimSpace(f.Get("stampsPerSale")), 10, 32); err != nil {
		v.Add("stampsPerSale", "The stampsPerSale field must be a whole number.")
	} else {
		n32 := int32(n)
		req.StampsPerSale = &n32
	}
	auto := f.Get("autoEnroll") == "on"
	req.AutoEnroll = &auto
	err := v.Err()
	if err == nil {
		_, err = p.svc.PutLoyaltyProgram(q.ctx, q.pr, pos, id, req)
	}
	if err != nil {
		return p.formError(q, err, func(status int, v view) error { return p.renderCompany(q, status, v) })
	}
	return q.redirect("/portal/companies/"+url.PathEscape(pos)+"/"+url.PathEscape(id), "Loyalty program saved.")
}

// couponsData is the coupons page's.
type couponsData struct {
	Places []place
	// Company is the chosen "posSystemId/posCompanyId".
	Company string
	Code    string
	Found   *service.CouponView
	// Email and Phone search the company's coupons; Results are found.
	Email, Phone string
	Results      *service.CompanyCouponPage
	Form         url.Values
	// Imported is the count of the last import.
	Imported int
}

// coupons finds a coupon by its code in a company, and holds the forms
// that issue one and import a CSV file of them.
func (p *Portal) coupons(q *request) error { return p.renderCoupons(q, http.StatusOK, view{}) }

func (p *Portal) renderCoupons(q *request, status int, v view) error {
	places, err := p.reach(q)
	if err != nil {
		return err
	}
	query := q.r.URL.Query()
	d := couponsData{Places: places, Company: query.Get("company"), Code: strings.TrimSpace(query.Get("code")), Form: q.r.PostForm}
	if d.Company == "" && d.Form != nil {
		d.Company = d.Form.Get("company")
	}
	if d.Company == "" {
		for _, pl := range places {
			if len(pl.Companies) > 0 {
				d.Company = pl.POS.ID + "/" + pl.Companies[0].ID
				break
			}
		}
	}
	d.Email, d.Phone = strings.TrimSpace(query.Get("email")), strings.TrimSpace(query.Get("phone"))
	if (d.Email != "" || d.Phone != "") && v.Error == "" {
		pos, co, _ := strings.Cut(d.Company, "/")
		req := &service.SearchCouponsRequest{}
		if d.Email != "" {
			req.Email = &d.Email
		}
		if d.Phone != "" {
			req.Phone = &d.Phone
		}
		res, err := p.svc.SearchCompanyCoupons(q.ctx, q.pr, pos, co, req)
		if err != nil {
			return p.formError(q, err, func(st int, fv view) error {
				fv.Title, fv.Nav, fv.Data = "Coupons", "coupons", d
				return p.render(q, st, "coupons", fv)
			})
		}
		d.Results = res
	}
	if d.Code != "" && v.Error == "" {
		pos, co, _ := strings.Cut(d.Company, "/")
		c, err := p.svc.FindCoupon(q.ctx, q.pr, pos, co, d.Code)
		switch posgate.ErrorCode(err) {
		case "":
			d.Found = c
		case posgate.ENOTFOUND, posgate.EINVALID:
			v.Error = posgate.ErrorMessage(err)
			status = http.StatusNotFound
		default:
			return err
		}
	}
	v.Title, v.Nav, v.Data = "Coupons", "coupons", d
	return p.render(q, status, "coupons", v)
}

func (p *Portal) couponsError(q *request, err error) error {
	return p.formError(q, err, func(status int, v view) error { return p.renderCoupons(q, status, v) })
}

// issueCoupon issues one coupon.
func (p *Portal) issueCoupon(q *request) error {
	f := q.r.PostForm
	pos, co, _ := strings.Cut(f.Get("company"), "/")
	in := &service.CouponInput{Code: strings.TrimSpace(f.Get("code")), RewardProvider: posgate.RewardProvider(f.Get("rewardProvider")),
		UserID: strings.TrimSpace(f.Get("userId")), Email: strings.TrimSpace(f.Get("email")), LocationIDs: list(f.Get("locationIds"))}
	if s := strings.TrimSpace(f.Get("title")); s != "" {
		in.Title = &s
	}
	if s := strings.TrimSpace(f.Get("availableUntil")); s != "" {
		t, err := time.Parse("2006-01-02", s)
		if err != nil {
			return p.couponsError(q, posgate.ValidationError{"availableUntil": {"A date such as 2030-12-31 is required."}}.Err())
		}
		end := t.Add(24*time.Hour - time.Second)
		in.AvailableUntil = &end
	}
	c, err := p.svc.IssueCoupon(q.ctx, q.pr, pos, co, in)
	if err != nil {
		return p.couponsError(q, err)
	}
	return q.redirect("/portal/coupons?company="+url.QueryEscape(pos+"/"+co)+"&code="+url.QueryEscape(c.Code), "Coupon "+c.Code+" issued.")
}

// maxCouponUpload caps a CSV upload (the operator API's batch is capped by
// count the same way, in IssueCouponBatch).
const maxCouponUpload = 32 << 20

// importCoupons issues the coupons of an uploaded CSV file, all or none
// (IssueCouponBatch: every row checked first, a faulty one named by its
// line). The form is multipart, so it is read before the form checks,
// which then find its CSRF field.
func (p *Portal) importCoupons(q *request) error {
	f := q.r.PostForm
	pos, co, _ := strings.Cut(f.Get("company"), "/")
	file, _, err := q.r.FormFile("file")
	if err != nil {
		return p.couponsError(q, posgate.ValidationError{"file": {"Choose a CSV file (columns: " + strings.Join(importfile.CouponCSVColumns, ", ") + ")."}}.Err())
	}
	defer file.Close()
	res, err := p.svc.IssueCouponBatch(q.ctx, q.pr, pos, co, importfile.ReadCouponsCSV(file))
	if err != nil {
		return p.couponsError(q, err)
	}
	return q.redirect("/portal/coupons?company="+url.QueryEscape(pos+"/"+co), fmt.Sprintf("%d coupons issued from the file.", res.Created))
}

// setCouponStatus redeems or cancels a coupon.
func (p *Portal) setCouponStatus(q *request) error {
	var to posgate.CouponStatus
	switch q.r.PathValue("action") {
	case "redeem":
		to = posgate.CouponRedeemed
	case "cancel":
		to = posgate.CouponCancelled
	default:
		return posgate.Errorf(posgate.ENOTFOUND, "There is no such page.")
	}
	pos, co, code := q.r.PathValue("pos"), q.r.PathValue("company"), q.r.PathValue("code")
	back := "/portal/coupons?company=" + url.QueryEscape(pos+"/"+co) + "&code=" + url.QueryEscape(code)
	c, err := p.svc.SetCouponStatus(q.ctx, q.pr, pos, co, code, to)
	if err != nil {
		if posgate.ErrorCode(err) == posgate.ECONFLICT {
			return q.redirect(back, posgate.ErrorMessage(err))
		}
		return err
	}
	return q.redirect(back, fmt.Sprintf("Coupon %s is %s.", c.Code, c.Status))
}

// loyaltyData is the loyalty users page's.
type loyaltyData struct {
	Places  []place
	Company string
	User    string
	Found   *service.LoyaltyUserView
	// Keyword searches the company's users; Matches are found.
	Keyword string
	Matches []*posgate.LoyaltyUser
	Form    url.Values
}

// loyaltyUsers finds a loyalty user by id in a company, with the form that
// adjusts their points and stamps.
func (p *Portal) loyaltyUsers(q *request) error { return p.renderLoyalty(q, http.StatusOK, view{}) }

func (p *Portal) renderLoyalty(q *request, status int, v view) error {
	places, err := p.reach(q)
	if err != nil {
		return err
	}
	query := q.r.URL.Query()
	d := loyaltyData{Places: places, Company: query.Get("company"), User: strings.TrimSpace(query.Get("user")), Form: q.r.PostForm}
	if d.Company == "" {
		for _, pl := range places {
			if len(pl.Companies) > 0 {
				d.Company = pl.POS.ID + "/" + pl.Companies[0].ID
				break
			}
		}
	}
	if d.Keyword = strings.TrimSpace(query.Get("keyword")); d.Keyword != "" && v.Error == "" {
		pos, co, _ := strings.Cut(d.Company, "/")
		users, err := p.svc.SearchCompanyLoyaltyUsers(q.ctx, q.pr, pos, co, d.Keyword)
		if err != nil {
			return p.formError(q, err, func(st int, fv view) error {
				fv.Title, fv.Nav, fv.Data = "Loyalty users", "loyalty", d
				return p.render(q, st, "loyalty", fv)
			})
		}
		d.Matches = users
	}
	if d.User != "" {
		pos, co, _ := strings.Cut(d.Company, "/")
		u, err := p.svc.FindLoyaltyUser(q.ctx, q.pr, pos, co, d.User)
		switch posgate.ErrorCode(err) {
		case "":
			d.Found = u
		case posgate.ENOTFOUND, posgate.EINVALID:
			if v.Error == "" {
				v.Error, status = posgate.ErrorMessage(err), http.StatusNotFound
			}
		default:
			return err
		}
	}
	v.Title, v.Nav, v.Data = "Loyalty users", "loyalty", d
	return p.render(q, status, "loyalty", v)
}

// adjustLoyaltyUser adds (or takes) points and stamps.
func (p *Portal) adjustLoyaltyUser(q *request) error {
	pos, co, user := q.r.PathValue("pos"), q.r.PathValue("company"), q.r.PathValue("user")
	f := q.r.PostForm
	v := posgate.ValidationError{}
	delta := func(field string) int32 {
		s := strings.TrimSpace(f.Get(field))
		if s == "" {
			return 0
		}
		n, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			v.Add(field, "The "+field+" field must be a whole number (negative to take away).")
		}
		return int32(n)
	}
	req := &service.UpdateLoyaltyUserRequest{PointsDelta: delta("pointsDelta"), StampsDelta: delta("stampsDelta")}
	err := v.Err()
	if err == nil {
		_, err = p.svc.UpdateLoyaltyUser(q.ctx, q.pr, pos, co, user, req)
	}
	if err != nil {
		return p.formError(q, err, func(status int, v view) error {
			q.r.URL.RawQuery = url.Values{"company": {pos + "/" + co}, "user": {user}}.Encode()
			return p.renderLoyalty(q, status, v)
		})
	}
	return q.redirect("/portal/loyalty-users?company="+url.QueryEscape(pos+"/"+co)+"&user="+url.QueryEscape(user), "Loyalty user "+user+" adjusted.")
}
