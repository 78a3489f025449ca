package encode

import "testing"

// TestJSON: no HTML escaping (a URL keeps its "&"), no trailing newline,
// and the encoder's other rules as encoding/json has them.
func TestJSON(t *testing.T) {
	b, err := JSON(map[string]any{"url": "https://x.example/?a=1&b=<2>", "n": 1.5, "none": nil})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"n":1.5,"none":null,"url":"https://x.example/?a=1&b=<2>"}`; string(b) != want {
		t.Errorf("JSON = %s, want %s", b, want)
	}
	if _, err := JSON(func() {}); err == nil {
		t.Error("a func encodes")
	}
}
