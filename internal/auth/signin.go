package auth

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/posgate/posgate"
	"github.com/posgate/posgate/internal/auth/credential"
)

// People is the part of posgate.Store that the browser side of the identity
// provider needs: people, their sign-ins, and the codes, refresh tokens
// and redirect URIs of the browser flows (docs/api.md §21).
type People interface {
	FindPerson(ctx context.Context, id string) (*posgate.Person, error)
	FindPersonByEmail(ctx context.Context, email string) (*posgate.Person, error)
	CreateSignIn(ctx context.Context, s *posgate.SignIn) error
	FindSignIn(ctx context.Context, idHash []byte, now time.Time) (*posgate.SignIn, error)
	DeleteSignIn(ctx context.Context, idHash []byte) error
	CreateAuthCode(ctx context.Context, c *posgate.AuthCode) error
	UseAuthCode(ctx context.Context, codeHash []byte) (*posgate.AuthCode, error)
	FindAuthCode(ctx context.Context, codeHash []byte) (*posgate.AuthCode, error)
	CreateRefreshToken(ctx context.Context, t *posgate.RefreshToken) error
	UseRefreshToken(ctx context.Context, tokenHash []byte) (*posgate.RefreshToken, error)
	FindRefreshToken(ctx context.Context, tokenHash []byte) (*posgate.RefreshToken, error)
	RevokeRefreshFamily(ctx context.Context, familyID string) error
	ClientRedirectURIs(ctx context.Context, clientID string) ([]string, error)
}

// Defaults of the browser side (docs/api.md §21.2, §21.3).
const (
	DefaultSignInTTL       = 8 * time.Hour
	DefaultLoginFailures   = 5  // per account
	DefaultLoginAddrFails  = 20 // per address
	DefaultLoginLockout    = 5 * time.Minute
	DefaultAuthCodeTTL     = time.Minute
	DefaultRefreshTokenTTL = 24 * time.Hour

	// LoginPath is where people sign in: the real service's path.
	LoginPath  = "/Account/Login"
	LogoutPath = "/Account/Logout"
	// CSRFField is the name of the CSRF token of every form.
	CSRFField = "csrf"
)

// browser is the state of the browser side; nil in an Auth without People.
type browser struct {
	people         People
	signInTTL      time.Duration
	codeTTL        time.Duration
	refreshTTL     time.Duration
	secure         bool     // cookies get Secure and the __Host- prefix
	origins        []string // allowed Origin values of form posts
	accountLockout *lockout
	addressLockout *lockout
	dummyPassword  string // compared against for unknown e-mail addresses
}

// sessionCookie and csrfCookie name the cookies: __Host- prefixed over
// https (RFC 6265bis §4.1.3.2: Secure, Path=/, no Domain); a browser
// refuses that prefix on a cookie that is not Secure, so plain http (a
// developer's machine) drops it.
func (b *browser) sessionCookie() string { return b.cookieName("posgate-session") }
func (b *browser) csrfCookie() string    { return b.cookieName("posgate-csrf") }

func (b *browser) cookieName(n string) string {
	if b.secure {
		return "__Host-" + n
	}
	return n
}

func (b *browser) cookie(name, value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/", MaxAge: maxAge, HttpOnly: true, Secure: b.secure, SameSite: http.SameSiteLaxMode}
}

// dummyPasswordHash is what a sign-in with an unknown e-mail address is
// checked against, so that it takes a known one's time: the argon2id hash,
// with credential.HashPassword's parameters, of a random password that was thrown
// away. It is a constant rather than hashed at start-up because one
// argon2id hash allocates 64 MiB, which every start paid in
// resident memory and in the collector's next heap goal
// (TestDummyPasswordHashHasTheCurrentParameters keeps it in step).
const dummyPasswordHash = "$argon2id$v=19$m=65536,t=3,p=2$t+bqiPL9zMijCwWECT7SRA$iL0yWHvjk9HRO3xqZW1HnnOjmz+yxIPo2bBBuyKsu4I"

// newBrowser prepares the browser side from cfg.
func newBrowser(issuer string, cfg Config) (*browser, error) {
	if cfg.People == nil {
		return nil, nil
	}
	b := &browser{
		people:         cfg.People,
		signInTTL:      orDefault(cfg.SignInTTL, DefaultSignInTTL),
		codeTTL:        orDefault(cfg.AuthCodeTTL, DefaultAuthCodeTTL),
		refreshTTL:     orDefault(cfg.RefreshTokenTTL, DefaultRefreshTokenTTL),
		secure:         strings.HasPrefix(issuer, "https://"),
		accountLockout: newLockout(orDefault(cfg.LoginFailures, DefaultLoginFailures), orDefault(cfg.LoginLockout, DefaultLoginLockout)),
		addressLockout: newLockout(orDefault(cfg.LoginAddressFailures, DefaultLoginAddrFails), orDefault(cfg.LoginLockout, DefaultLoginLockout)),
		dummyPassword:  dummyPasswordHash,
	}
	for _, u := range append([]string{issuer}, cfg.Origins...) {
		if o := origin(u); o != "" {
			b.origins = append(b.origins, o)
		}
	}
	return b, nil
}

// origin is the scheme://host[:port] of an absolute URL; "" for another.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme + "://" + u.Host)
}

// randomToken returns 32 random bytes, base64url: session ids, CSRF
// cookies, codes and refresh tokens.
func randomToken() (string, error) { return credential.GenerateSecret() }

func hashToken(s string) []byte { return credential.HashSecret(s) }

// errNoBrowser answers the browser routes of an Auth built without People.
var errNoBrowser = errors.New("auth: the browser flows need Config.People")

// SignedIn returns the person whose sign-in cookie r carries, or nil when
// it carries none that is live (unknown, expired, signed out, or the person
// disabled or gone). The portal calls it too: one session for both.
func (a *Auth) SignedIn(r *http.Request) (*posgate.Person, error) {
	b := a.browser
	if b == nil {
		return nil, errNoBrowser
	}
	c, err := r.Cookie(b.sessionCookie())
	if err != nil || c.Value == "" {
		return nil, nil
	}
	s, err := b.people.FindSignIn(r.Context(), hashToken(c.Value), a.now())
	if posgate.ErrorCode(err) == posgate.ENOTFOUND {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	p, err := b.people.FindPerson(r.Context(), s.PersonID)
	switch {
	case posgate.ErrorCode(err) == posgate.ENOTFOUND:
		return nil, nil
	case err != nil:
		return nil, err
	case p.Disabled:
		return nil, nil
	}
	return p, nil
}

// CSRFToken returns the CSRF token to put in a form of the page answering
// r, setting the CSRF cookie on w when r has none. The token is the cookie's
// value (a double submit, which a cross-site page can neither read nor set,
// since the cookie is HttpOnly and, over https, __Host- prefixed) and
// CheckForm also demands a same-origin Origin header.
func (a *Auth) CSRFToken(w http.ResponseWriter, r *http.Request) string {
	b := a.browser
	if b == nil {
		return ""
	}
	if c, err := r.Cookie(b.csrfCookie()); err == nil && len(c.Value) == 43 {
		return c.Value
	}
	v, err := randomToken()
	if err != nil {
		return ""
	}
	http.SetCookie(w, b.cookie(b.csrfCookie(), v, 0))
	// A page answering r may read it again (the login page after a failed
	// attempt sets no new cookie).
	r.AddCookie(&http.Cookie{Name: b.csrfCookie(), Value: v})
	return v
}

// Form errors of CheckForm, shown to the person.
var (
	errBadOrigin = posgate.Errorf(posgate.EFORBIDDEN, "The form was sent from another site (Origin).")
	errBadCSRF   = posgate.Errorf(posgate.EFORBIDDEN, "The form's CSRF token is missing or wrong; reload the page and try again.")
)

// CheckForm refuses a form post that did not come from a posgate page: its
// Origin (or, without one, Referer) must be the identity provider's or
// another configured public origin, and its CSRF field must equal the CSRF
// cookie. It parses the form (r.PostForm). The portal's forms use it too.
func (a *Auth) CheckForm(r *http.Request) error {
	b := a.browser
	if b == nil {
		return errNoBrowser
	}
	o := r.Header.Get("Origin")
	if o == "" {
		o = origin(r.Referer())
	}
	ok := false
	for _, allowed := range b.origins {
		if strings.EqualFold(o, allowed) {
			ok = true
		}
	}
	if !ok {
		return errBadOrigin
	}
	r.Body = http.MaxBytesReader(nil, r.Body, maxTokenBody)
	if err := r.ParseForm(); err != nil {
		return posgate.Errorf(posgate.EINVALID, "The form could not be read.")
	}
	c, err := r.Cookie(b.csrfCookie())
	sent := r.PostForm.Get(CSRFField)
	if err != nil || len(c.Value) != 43 || subtle.ConstantTimeCompare([]byte(c.Value), []byte(sent)) != 1 {
		return errBadCSRF
	}
	return nil
}

// signIn starts a session for person p and sets its cookie.
func (a *Auth) signIn(w http.ResponseWriter, r *http.Request, p *posgate.Person) error {
	b := a.browser
	id, err := randomToken()
	if err != nil {
		return err
	}
	now := a.now()
	if err := b.people.CreateSignIn(r.Context(), &posgate.SignIn{IDHash: hashToken(id), PersonID: p.ID, CreatedAt: now, ExpiresAt: now.Add(b.signInTTL)}); err != nil {
		return err
	}
	http.SetCookie(w, b.cookie(b.sessionCookie(), id, int(b.signInTTL/time.Second)))
	return nil
}

// localTarget returns ReturnUrl when it is a path on this site, else "/":
// an open redirect would let a link to the login page send the person
// anywhere once signed in.
func localTarget(s string) string {
	if s == "" || s[0] != '/' || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/\\") || strings.ContainsAny(s, "\r\n") {
		return "/"
	}
	return s
}

// securityHeaders are set on every page of the identity provider: nothing
// but its own origin, no framing (clickjacking of the sign-in form), no
// caching of pages that hold CSRF tokens.
func securityHeaders(w http.ResponseWriter) {
	h := w.Header()
	// No form-action: browsers apply it to the redirects that follow a
	// form post too, and the sign-in's chain ends at the client's redirect
	// URI, which may be on another origin.
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'self' 'unsafe-inline'; img-src 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
}

var pageTemplate = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Title}} – posgate</title>
<style>body{font-family:system-ui,sans-serif;max-width:26rem;margin:4rem auto;padding:0 1rem}label{display:block;margin:.8rem 0 .2rem}input{width:100%;padding:.4rem;box-sizing:border-box}button{margin-top:1rem;padding:.5rem 1.2rem}.error{color:#a40000}</style>
</head><body>
<h1>{{.Title}}</h1>
{{if .Error}}<p class="error" id="error" role="alert">{{.Error}}</p>{{end}}
{{if .Login}}<form method="post" action="{{.Action}}">
<input type="hidden" name="csrf" value="{{.CSRF}}">
<input type="hidden" name="ReturnUrl" value="{{.ReturnURL}}">
<label for="email">E-mail</label><input id="email" name="email" type="email" autocomplete="username" required value="{{.Email}}" autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required>
<button id="signin" type="submit">Sign in</button>
</form>{{end}}
{{if .Person}}<p>Signed in as {{.Person}}.</p>
<form method="post" action="{{.LogoutAction}}"><input type="hidden" name="csrf" value="{{.CSRF}}"><button id="signout" type="submit">Sign out</button></form>{{end}}
</body></html>
`))

type page struct {
	Title, Error, Action, LogoutAction, CSRF, ReturnURL, Email, Person string
	Login                                                              bool
}

func (a *Auth) writePage(w http.ResponseWriter, status int, p page) {
	securityHeaders(w)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	if err := pageTemplate.Execute(w, p); err != nil {
		a.log.Warn("auth: writing a page failed", "err", err)
	}
}

// LoginHandler serves {auth_url}/Account/Login: GET shows the form (or,
// signed in, who is signed in), POST checks it (docs/api.md §21.2). Mount
// it for GET and POST.
func (a *Auth) LoginHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if a.browser == nil {
			http.NotFound(w, r)
			return
		}
		target := localTarget(r.URL.Query().Get("ReturnUrl"))
		if r.Method == http.MethodPost {
			a.login(w, r)
			return
		}
		p, err := a.SignedIn(r)
		if err != nil {
			a.serverError(w, r, err)
			return
		}
		if p != nil && r.URL.Query().Get("ReturnUrl") != "" {
			http.Redirect(w, r, target, http.StatusSeeOther)
			return
		}
		pg := page{Title: "Sign in", Action: LoginPath, LogoutAction: LogoutPath, CSRF: a.CSRFToken(w, r), ReturnURL: target, Login: p == nil}
		if p != nil {
			pg.Title, pg.Person = "Signed in", p.Email
		}
		a.writePage(w, http.StatusOK, pg)
	})
}

// loginFailed is the one message of every failed sign-in: it tells no one
// whether the address is registered, disabled, or the password wrong.
const loginFailed = "The e-mail address or the password is wrong."

func (a *Auth) login(w http.ResponseWriter, r *http.Request) {
	b := a.browser
	if err := a.CheckForm(r); err != nil {
		a.writePage(w, http.StatusForbidden, page{Title: "Sign in", Error: posgate.ErrorMessage(err), Action: LoginPath,
			CSRF: a.CSRFToken(w, r), ReturnURL: "/", Login: true})
		return
	}
	f := r.PostForm
	email, password, target := posgate.NormalizeEmail(f.Get("email")), f.Get("password"), localTarget(f.Get("ReturnUrl"))
	again := page{Title: "Sign in", Action: LoginPath, CSRF: a.CSRFToken(w, r), ReturnURL: target, Email: email, Login: true}
	now, host := a.now(), remoteHost(r.RemoteAddr)
	// A locked account or address waits even with the right password, so
	// that the lockout tells a guesser nothing.
	if wait := max(b.accountLockout.wait(email, now), b.addressLockout.wait(host, now)); wait > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(retryAfterSeconds(wait)))
		again.Error = fmt.Sprintf("Too many failed sign-ins; try again in %d s.", retryAfterSeconds(wait))
		a.writePage(w, http.StatusTooManyRequests, again)
		return
	}
	var p *posgate.Person
	if email != "" && len(email) <= 254 {
		found, err := b.people.FindPersonByEmail(r.Context(), email)
		switch {
		case err == nil:
			p = found
		case posgate.ErrorCode(err) != posgate.ENOTFOUND:
			a.serverError(w, r, err)
			return
		}
	}
	hash := b.dummyPassword
	if p != nil {
		hash = p.PasswordHash
	}
	ok, err := credential.PasswordMatches(hash, password)
	if err != nil {
		a.log.Error("auth: a stored password hash is malformed", "person", p.ID, "err", err)
	}
	if p == nil || !ok || p.Disabled {
		if email != "" && b.accountLockout.fail(email, now) {
			a.log.Warn("auth: account locked out after failed sign-ins", "for", b.accountLockout.window)
		}
		if b.addressLockout.fail(host, now) {
			a.log.Warn("auth: address locked out after failed sign-ins", "address", host, "for", b.addressLockout.window)
		}
		again.Error = loginFailed
		a.writePage(w, http.StatusOK, again)
		return
	}
	if err := a.signIn(w, r, p); err != nil {
		a.serverError(w, r, err)
		return
	}
	a.log.Info("auth: signed in", "person", p.ID)
	http.Redirect(w, r, target, http.StatusSeeOther)
}

// LogoutHandler serves POST {auth_url}/Account/Logout: it ends the session
// and clears its cookie. Mount it for POST.
func (a *Auth) LogoutHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := a.browser
		if b == nil {
			http.NotFound(w, r)
			return
		}
		if err := a.CheckForm(r); err != nil {
			a.writePage(w, http.StatusForbidden, page{Title: "Sign out", Error: posgate.ErrorMessage(err)})
			return
		}
		if c, err := r.Cookie(b.sessionCookie()); err == nil && c.Value != "" {
			if err := b.people.DeleteSignIn(r.Context(), hashToken(c.Value)); err != nil {
				a.serverError(w, r, err)
				return
			}
		}
		http.SetCookie(w, b.cookie(b.sessionCookie(), "", -1))
		http.Redirect(w, r, LoginPath, http.StatusSeeOther)
	})
}

// serverError answers a failure of the store: logged, shown as
// "Internal error.".
func (a *Auth) serverError(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() == nil {
		a.log.Error("auth: browser request failed", "path", r.URL.Path, "err", err)
	}
	a.writePage(w, http.StatusInternalServerError, page{Title: "Error", Error: "Internal error."})
}

// sha256B64 is the PKCE S256 transform (RFC 7636 §4.2).
func sha256B64(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}
