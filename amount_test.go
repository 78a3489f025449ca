package posgate

import (
	"errors"
	"testing"
)

func TestParseAmount(t *testing.T) {
	for in, want := range map[string]Amount{
		"0": 0, "-0": 0, "12": 1200, "12.3": 1230, "12.34": 1234, "12.345": 1234, "12.355": 1236, "12.3451": 1235,
		"-12.345": -1234, "-12.355": -1236, "0.015": 2, "0.0051": 1, "-0.006": -1, "0e7": 0, "0.000": 0, "0.0050000001": 1, "1e3": 100000, "1.5E-1": 15,
		"1000000000": 100000000000, "1e400": amountSaturated, "-1e400": -amountSaturated,
		"123456789012345678901234567890": amountSaturated,
	} {
		got, err := ParseAmount(in)
		if err != nil || got != want {
			t.Errorf("ParseAmount(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	// A number other than 0 that rounds to 0.00 would change meaning (a
	// refund's sign, a price): refused.
	for _, in := range []string{"0.005", "-0.001", "0.004", "-0.005", "1e-400", "-1e-3", "0.000000000000000000000000000005"} {
		if got, err := ParseAmount(in); !errors.Is(err, ErrAmountRoundsToZero) {
			t.Errorf("ParseAmount(%q) = %d, %v; want ErrAmountRoundsToZero", in, got, err)
		}
	}
	for _, in := range []string{"", "-", "01", "1.", ".5", "1e", "1e+", "+1", `"1"`, "1 ", "0x10", "NaN", "true", "null"} {
		if _, err := ParseAmount(in); err == nil {
			t.Errorf("ParseAmount(%q) accepted", in)
		}
	}
	for a, want := range map[Amount]string{0: "0.00", 5: "0.05", -5: "-0.05", 1234: "12.34", -100000: "-1000.00"} {
		if got := a.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int64(a), got, want)
		}
	}
}

func TestEarnAndReversedPoints(t *testing.T) {
	p := &LoyaltyProgram{PointsPerCurrencyUnit: 150, StampsPerSale: 2, MinimumAmountForStamp: 500}
	for amount, want := range map[Amount][2]int32{0: {0, 0}, 499: {7, 0}, 500: {7, 2}, 1234: {18, 2}, -500: {0, 0}, MaxAmount: {1_500_000_000, 2}} {
		if pts, st := p.Earn(amount); pts != want[0] || st != want[1] {
			t.Errorf("Earn(%s) = %d, %d; want %v", amount, pts, st, want)
		}
	}
	big := &LoyaltyProgram{PointsPerCurrencyUnit: MaxPointsPerCurrencyUnit}
	if pts, _ := big.Earn(MaxAmount); pts != 2147483647 {
		t.Errorf("Earn caps at int32: %d", pts)
	}
	// 3 points for 10.00: refunds of 5.00 and 5.00 take back 2 (1.5 rounds
	// up) and then 1, never more than earned.
	if r := ReversedPoints(3, 1000, 0, 500); r != 2 {
		t.Errorf("first half: %d", r)
	}
	if r := ReversedPoints(3, 1000, 500, 1000); r != 1 {
		t.Errorf("second half: %d", r)
	}
	if r := ReversedPoints(2147483647, MaxAmount, 0, MaxAmount); r != 2147483647 {
		t.Errorf("whole refund of the largest sale: %d", r)
	}
	if r := ReversedPoints(0, 1000, 0, 1000); r != 0 {
		t.Errorf("nothing earned: %d", r)
	}
}
