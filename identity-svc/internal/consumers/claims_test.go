package consumers

import "testing"

func TestSocialHandle(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"@Octo_Cat": "octo_cat", "octocat": "octocat", "https://github.com/OctoCat": "octocat",
		"https://x.com/ada/": "ada", "https://www.linkedin.com/in/grace-h": "grace-h",
	} {
		if got := socialHandle(in); got != want {
			t.Errorf("socialHandle(%q) = %q, want %q", in, got, want)
		}
	}
}
