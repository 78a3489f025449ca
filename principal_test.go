package posgate

import "testing"

// TestPrincipalReach: the reach rules every use case applies, for an
// unrestricted operator, a POS client, a company-restricted client and a
// location manager; a nil principal sees nothing.
func TestPrincipalReach(t *testing.T) {
	type check struct {
		pos, company, location bool
		unrestricted           bool
	}
	for name, tc := range map[string]struct {
		p    *Principal
		want check
	}{
		"nil":                  {nil, check{}},
		"operator":             {&Principal{}, check{true, true, true, true}},
		"POS client":           {&Principal{POSSystemID: "clover"}, check{true, true, true, false}},
		"other POS system":     {&Principal{POSSystemID: "pax"}, check{false, false, false, false}},
		"company restricted":   {&Principal{POSSystemID: "clover", CompanyIDs: []string{"acme"}}, check{true, true, true, false}},
		"other company":        {&Principal{POSSystemID: "clover", CompanyIDs: []string{"zeta"}}, check{true, false, false, false}},
		"location manager":     {&Principal{POSSystemID: "clover", LocationIDs: []string{"L1"}}, check{true, false, true, false}},
		"other location":       {&Principal{POSSystemID: "clover", LocationIDs: []string{"L2"}}, check{true, false, false, false}},
		"admin person":         {&Principal{PersonID: "p", LocationIDs: nil}, check{true, true, true, true}},
		"manager, unbound POS": {&Principal{LocationIDs: []string{"L1"}}, check{true, false, true, false}},
	} {
		got := check{tc.p.CanSeePOSSystem("clover"), tc.p.CanSeeCompany("clover", "acme"), tc.p.CanSeeLocation("clover", "acme", "L1"), tc.p.Unrestricted()}
		if got != tc.want {
			t.Errorf("%s: got %+v, want %+v", name, got, tc.want)
		}
	}
}
