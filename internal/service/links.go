package service

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"net/url"
	"strconv"
	"sync"

	"github.com/posgate/posgate"
)

// urlSecretName names the store secret that signs carousel and QR URLs. It
// lives in the store so that every instance sharing it verifies the URLs
// another one made.
const urlSecretName = "content-url-signing"

// links signs and verifies the URLs that posgate hands out without a token:
// the carousel page's link (the customer screen has no token) and the
// receipt's QR image (a printer fetches it). The signature is their access
// rule.
type links struct {
	store posgate.Store
	mu    sync.Mutex
	key   []byte
}

// urlKey returns the URL-signing key, creating it in the store the first
// time any instance needs it.
func (l *links) urlKey(ctx context.Context) ([]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.key != nil {
		return l.key, nil
	}
	candidate := make([]byte, 32)
	rand.Read(candidate)
	key, err := l.store.EnsureSecret(ctx, urlSecretName, candidate)
	if err != nil {
		return nil, fmt.Errorf("URL-signing key: %w", err)
	}
	if len(key) < 32 {
		return nil, fmt.Errorf("URL-signing key: the stored secret has %d bytes, want 32", len(key))
	}
	l.key = key
	return key, nil
}

// sign returns the base64url HMAC-SHA256 of parts, each ended by a newline
// (ids cannot hold one, so the encoding is unambiguous).
func (l *links) sign(ctx context.Context, parts ...string) (string, error) {
	key, err := l.urlKey(ctx)
	if err != nil {
		return "", err
	}
	mac := hmac.New(sha256.New, key)
	for _, p := range parts {
		mac.Write([]byte(p))
		mac.Write([]byte{'\n'})
	}
	return base64.RawURLEncoding.EncodeToString(mac.Sum(nil)), nil
}

// verify reports whether sig is the signature of parts, in constant time.
func (l *links) verify(ctx context.Context, sig string, parts ...string) (bool, error) {
	want, err := l.sign(ctx, parts...)
	if err != nil {
		return false, err
	}
	return hmac.Equal([]byte(sig), []byte(want)), nil
}

// CarouselLink is what a carousel URL carries: the place whose carousel it
// shows, its expiry and the signature over both. The HTTP adapter reads it
// from the query (ParseCarouselQuery) and the carousel use cases check it.
type CarouselLink struct {
	POSSystemID, CompanyID, LocationID, TerminalID string
	Expires                                        int64 // Unix seconds
	Sig                                            string
}

func (l CarouselLink) parts() []string {
	return []string{"carousel", l.POSSystemID, l.CompanyID, l.LocationID, l.TerminalID, strconv.FormatInt(l.Expires, 10)}
}

// Messages of refused carousel links; the page shows them as they are.
const (
	msgBadCarouselLink     = "This carousel link is not valid. Ask the POS for a new one."
	msgExpiredCarouselLink = "This carousel link has expired. Ask the POS for a new one."
)

// ParseCarouselQuery reads a carousel link from a URL query: each value must
// appear exactly once. A malformed query gives a link that fails
// CheckCarouselLink.
func ParseCarouselQuery(q url.Values) CarouselLink {
	one := func(name string) string {
		if vs := q[name]; len(vs) == 1 {
			return vs[0]
		}
		return ""
	}
	l := CarouselLink{POSSystemID: one("pos"), CompanyID: one("company"), LocationID: one("location"), TerminalID: one("terminal"), Sig: one("sig")}
	exp, err := strconv.ParseInt(one("expires"), 10, 64)
	if err != nil {
		l.Sig = "" // unverifiable
	}
	l.Expires = exp
	return l
}

// carouselURL is the signed URL of posgate's carousel page for l.
func (s *Service) carouselURL(ctx context.Context, l CarouselLink) (string, error) {
	sig, err := s.links.sign(ctx, l.parts()...)
	if err != nil {
		return "", err
	}
	q := url.Values{"pos": {l.POSSystemID}, "company": {l.CompanyID}, "location": {l.LocationID}, "terminal": {l.TerminalID},
		"expires": {strconv.FormatInt(l.Expires, 10)}, "sig": {sig}}
	return s.cfg.BaseURL + "/carousel?" + q.Encode(), nil
}

// CheckCarouselLink reports whether a carousel link is genuine and
// unexpired: a tampered or incomplete link, or an expired one, is
// EFORBIDDEN with a message the customer screen can show.
func (s *Service) CheckCarouselLink(ctx context.Context, l CarouselLink) error {
	if l.Sig == "" || l.POSSystemID == "" || l.CompanyID == "" || l.LocationID == "" || l.TerminalID == "" {
		return posgate.Errorf(posgate.EFORBIDDEN, msgBadCarouselLink)
	}
	ok, err := s.links.verify(ctx, l.Sig, l.parts()...)
	if err != nil {
		return err
	} else if !ok {
		return posgate.Errorf(posgate.EFORBIDDEN, msgBadCarouselLink)
	}
	if s.now().Unix() >= l.Expires {
		return posgate.Errorf(posgate.EFORBIDDEN, msgExpiredCarouselLink)
	}
	return nil
}

// qrURL is the URL of the QR code image of target. The URL carries the
// target itself, signed, so the image never changes for a URL (it is
// cacheable for good) and posgate renders only targets an operator set.
func (s *Service) qrURL(ctx context.Context, target string) (string, error) {
	sig, err := s.links.sign(ctx, "qr", target)
	if err != nil {
		return "", err
	}
	q := url.Values{"d": {base64.RawURLEncoding.EncodeToString([]byte(target))}, "sig": {sig}}
	return s.cfg.BaseURL + "/receipt/qr.png?" + q.Encode(), nil
}

// QRTarget checks a QR image URL's query and returns the target it encodes:
// only a target posgate signed (one an operator set) is rendered, so the
// route cannot be used to make arbitrary images. Anything else is
// EFORBIDDEN.
func (s *Service) QRTarget(ctx context.Context, q url.Values) (string, error) {
	target, err := base64.RawURLEncoding.DecodeString(q.Get("d"))
	valid := err == nil && len(target) > 0 && len(q["d"]) == 1 && len(q["sig"]) == 1
	if valid {
		if valid, err = s.links.verify(ctx, q.Get("sig"), "qr", string(target)); err != nil {
			return "", err
		}
	}
	if !valid {
		return "", posgate.Errorf(posgate.EFORBIDDEN, "This QR code link is not valid.")
	}
	return string(target), nil
}
