package posgate

import "testing"

// TestDecimalScaled checks exact decimal reading with half-to-even rounding,
// the way money and quantities are read (never through float64).
func TestDecimalScaled(t *testing.T) {
	for _, tc := range []struct {
		in     string
		scale  int
		want   int64
		exact  bool
		failed bool
	}{
		{"2.5", 2, 250, true, false},
		{"2.505", 2, 250, false, false}, // half to even: down
		{"2.515", 2, 252, false, false}, // half to even: up
		{"2.5051", 2, 251, false, false},
		{"0.125", 2, 12, false, false},
		{"0.135", 2, 14, false, false},
		{"-0.125", 2, -12, false, false},
		{"1e2", 2, 10000, true, false},
		{"1E-2", 2, 1, true, false},
		{"0.000000000000000000001", 2, 0, false, false},
		{"0.1", 3, 100, true, false},
		{"1.0001", 3, 1000, false, false},
		{"0", 2, 0, true, false},
		{"-0", 2, 0, true, false},
		{"123456789012345678", 0, 123456789012345678, true, false},
		{"1234567890123456789", 0, 0, false, true}, // beyond 18 digits
		{"1e400", 2, 0, false, true},
		{"1e17", 2, 0, false, true},
		{"abc", 2, 0, false, true},
		{"1.", 2, 0, false, true},
		{".5", 2, 0, false, true},
		{"", 2, 0, false, true},
	} {
		got, exact, err := Decimal(tc.in).Scaled(tc.scale)
		if (err != nil) != tc.failed || (err == nil && (got != tc.want || exact != tc.exact)) {
			t.Errorf("Scaled(%q, %d) = %d, %v, %v; want %d, %v, failed %v", tc.in, tc.scale, got, exact, err, tc.want, tc.exact, tc.failed)
		}
	}
}

func TestMulDivRound(t *testing.T) {
	for _, tc := range []struct{ a, b, d, want int64 }{
		{15, 1, 1000, 0},         // 0.015 → 0
		{25, 1000, 2000, 12},     // 12.5 → 12
		{35, 1000, 2000, 18},     // 17.5 → 18
		{1 << 62, 4, 8, 1 << 61}, // the product needs 128 bits
	} {
		if got, ok := mulDivRound(tc.a, tc.b, tc.d); !ok || got != tc.want {
			t.Errorf("mulDivRound(%d, %d, %d) = %d, %v; want %d", tc.a, tc.b, tc.d, got, ok, tc.want)
		}
	}
	if _, ok := mulDivRound(1<<62, 1<<62, 1); ok {
		t.Error("an overflowing result fits")
	}
}

func TestMinorUnitsJSON(t *testing.T) {
	for v, want := range map[MinorUnits]string{0: "0.00", 5: "0.05", -5: "-0.05", 1234: "12.34", -100: "-1.00"} {
		if b, _ := v.MarshalJSON(); string(b) != want {
			t.Errorf("%d: %s, want %s", v, b, want)
		}
	}
}
