package words

import "testing"

func TestSlug(t *testing.T) {
	for _, tc := range []struct {
		s, extra string
		want     bool
	}{
		{"architect", "-", true},
		{"product-manager", "-", true},
		{"a1", "-", true},
		{"9lives", "-", true},
		{"", "-", false},
		{"-lead", "-", false},
		{"Lead", "-", false},
		{"lead_dev", "-", false},
		{"lead_dev", "_-", true},
		{"_lead", "_-", false},
		{"lead dev", "-", false},
		{"léad", "-", false},
		{"lead\n", "-", false},
	} {
		if got := Slug(tc.s, tc.extra); got != tc.want {
			t.Errorf("Slug(%q, %q) = %v, want %v", tc.s, tc.extra, got, tc.want)
		}
	}
}
