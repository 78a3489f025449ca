package httpapi

import (
	"bytes"
	"image"
	"image/png"
	"strings"
	"testing"

	"github.com/makiuchi-d/gozxing"
	"github.com/makiuchi-d/gozxing/qrcode"

	"github.com/posgate/posgate"
)

// TestRenderQR checks both printer sizes with the shortest and the longest
// target an operator may set: exact image size, whole-pixel modules, and a
// code that decodes back to the target.
func TestRenderQR(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("x", posgate.MaxQRTargetLen-len("https://example.com/"))
	for _, target := range []string{"https://e.co", long} {
		for name, px := range qrSizes {
			b, err := renderQR(target, px)
			if err != nil {
				t.Fatalf("%s, %d bytes: %v", name, len(target), err)
			}
			img, err := png.Decode(bytes.NewReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if img.Bounds() != image.Rect(0, 0, px, px) {
				t.Fatalf("%s: bounds %v", name, img.Bounds())
			}
			bmp, err := gozxing.NewBinaryBitmapFromImage(img)
			if err != nil {
				t.Fatal(err)
			}
			res, err := qrcode.NewQRCodeReader().Decode(bmp, nil)
			if err != nil || res.GetText() != target {
				t.Fatalf("%s, %d bytes: decoded %v, %v", name, len(target), res, err)
			}
			// The finder pattern's top-left corner: a run of dark pixels
			// whose length is 7 modules, a whole number of pixels each.
			p := img.(*image.Paletted)
			first, run := -1, 0
			for x := 0; x < px; x++ {
				if p.ColorIndexAt(x, firstDarkRow(p)) == 1 {
					if first < 0 {
						first = x
					}
					run++
				} else if first >= 0 {
					break
				}
			}
			if run%7 != 0 || run < 14 {
				t.Fatalf("%s, %d bytes: finder pattern %d pixels wide, want 7 whole modules of at least 2 pixels", name, len(target), run)
			}
		}
	}
}

// firstDarkRow is the first row with a dark pixel: the top of the finder
// patterns.
func firstDarkRow(p *image.Paletted) int {
	b := p.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if p.ColorIndexAt(x, y) == 1 {
				return y
			}
		}
	}
	return 0
}

func BenchmarkRenderQR58mm(b *testing.B) {
	for b.Loop() {
		if _, err := renderQR("https://example.com/demo/receipt-offer", qrSizes["58mm"]); err != nil {
			b.Fatal(err)
		}
	}
}
