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

func TestClosest(t *testing.T) {
	known := []string{"issue", "status", "json", "agent", "all", "from", "to", "topic"}
	tests := []struct{ typed, want string }{
		{"isue", "issue"},
		{"stauts", "status"},
		{"jsno", "json"},
		{"ISSUE", "issue"},
		{"agnet", "agent"},
		{"tpoic", "topic"},
		{"zzzzzz", ""},
		{"x", ""},
		{"everything", ""},
	}
	for _, tt := range tests {
		if got := Closest(tt.typed, known); got != tt.want {
			t.Errorf("Closest(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}

func TestDidYouMean(t *testing.T) {
	known := []string{"architect", "engineer", "product-manager"}
	for _, tt := range []struct{ typed, want string }{
		{"architekt", "did you mean architect?"},
		{"enginer", "did you mean engineer?"},
		{"Engineer", "did you mean engineer? names are case-sensitive"},
		{"designer", ""},
		{"x", ""},
	} {
		if got := DidYouMean(tt.typed, known); got != tt.want {
			t.Errorf("DidYouMean(%q) = %q, want %q", tt.typed, got, tt.want)
		}
	}
}
