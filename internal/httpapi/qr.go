package httpapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"sync"

	qrcode "github.com/skip2/go-qrcode"

	"github.com/posgate/posgate"
)

// QR image sizes: the printable width of 58 mm and 80 mm thermal paper at
// 203 dpi (48 mm = 384 dots, 72 mm = 576 dots).
var qrSizes = map[string]int{"58mm": 384, "80mm": 576}

// maxCachedQR bounds the QR cache (images are 0.5–2 KB); when it is full it
// starts over, which costs one render per image still in use.
const maxCachedQR = 512

// qrCache keeps rendered QR images by ETag: every receipt of a location
// prints the same image, and rendering one costs milliseconds.
type qrCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

// get returns the image for etag, rendering and caching it if needed.
func (c *qrCache) get(etag, target string, px int) ([]byte, error) {
	c.mu.Lock()
	img, ok := c.m[etag]
	c.mu.Unlock()
	if ok {
		return img, nil
	}
	img, err := renderQR(target, px)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if c.m == nil || len(c.m) >= maxCachedQR {
		c.m = make(map[string][]byte)
	}
	c.m[etag] = img
	c.mu.Unlock()
	return img, nil
}

// receiptQR serves the PNG QR code of a signed target, sized for the
// thermal printer named by ?size= (58mm, the default, or 80mm).
func (s *Server) receiptQR(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	size := q.Get("size")
	if size == "" {
		size = "58mm"
	}
	px, ok := qrSizes[size]
	if !ok || len(q["size"]) > 1 {
		v := posgate.ValidationError{}
		v.Add("size", "The size parameter must be 58mm or 80mm.")
		return v.Err()
	}
	target, err := s.svc.QRTarget(r.Context(), q)
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(size + "\n" + target))
	etag := `"` + hex.EncodeToString(sum[:16]) + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	if match := r.Header.Get("If-None-Match"); match != "" && (match == "*" || strings.Contains(match, etag)) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	img, err := s.qr.get(etag, target, px)
	if err != nil {
		h.Del("ETag")
		h.Del("Cache-Control")
		return err
	}
	h.Set("Content-Type", "image/png")
	h.Set("Content-Length", strconv.Itoa(len(img)))
	w.Write(img)
	return nil
}

// renderQR draws target's QR code (error correction M, 4-module quiet
// zone) as a px × px black-and-white PNG. Every module is the same whole
// number of pixels, centred: thermal printers print dots, and uneven
// modules scan badly.
func renderQR(target string, px int) ([]byte, error) {
	code, err := qrcode.New(target, qrcode.Medium)
	if err != nil {
		return nil, fmt.Errorf("QR code: %w", err)
	}
	bits := code.Bitmap() // includes the quiet zone
	n := len(bits)
	scale := px / n
	if scale < 1 {
		return nil, fmt.Errorf("QR code: %d modules do not fit %d pixels", n, px)
	}
	off := (px - n*scale) / 2
	img := image.NewPaletted(image.Rect(0, 0, px, px), color.Palette{color.White, color.Black}) // a 1-bit PNG
	for y, row := range bits {
		for x, dark := range row {
			if !dark {
				continue
			}
			for dy := range scale {
				line := img.Pix[(off+y*scale+dy)*img.Stride:]
				for dx := range scale {
					line[off+x*scale+dx] = 1
				}
			}
		}
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.DefaultCompression}).Encode(&b, img); err != nil {
		return nil, fmt.Errorf("QR code: %w", err)
	}
	return b.Bytes(), nil
}
