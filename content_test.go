package posgate

import (
	"testing"
)

func TestExpandCarouselTemplate(t *testing.T) {
	got := ExpandCarouselTemplate("https://ads.example.com/s/{posLocationId}?t={terminalId}&c={posCompanyId}&p={posSystemId}", "clover", "a&b", "LOC 1/x", "T?1#é")
	want := "https://ads.example.com/s/LOC%201%2Fx?t=T%3F1%23%C3%A9&c=a%26b&p=clover"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}

func TestCarouselSettingsValidate(t *testing.T) {
	for tmpl, wantErr := range map[string]bool{
		"": false,
		"https://ads.example.com/{posSystemId}/{posCompanyId}/{posLocationId}/{terminalId}": false,
		"http://ads.example.com/screen":   false,
		"https://ads.example.com/{store}": true,
		"https://ads.example.com/{":       true,
		"/relative/{terminalId}":          true,
		"javascript:alert(1)":             true,
		"https://ads.example.com/a b":     true,
	} {
		err := (&CarouselSettings{POSSystemID: "clover", CompanyID: "acme", URLTemplate: tmpl}).Validate()
		if (err != nil) != wantErr {
			t.Errorf("%q: error %v, want error %v", tmpl, err, wantErr)
		}
	}
}
