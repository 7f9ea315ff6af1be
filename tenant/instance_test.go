package tenant

import (
	"strings"
	"testing"
)

// TestSubscriptionShares: one caller's share of the instance's
// subscription connections is its setting, else a tenth of the bound
// (rounded up, so at least one); a share above the bound, or below 0, is
// refused naming the setting.
func TestSubscriptionShares(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name                   string
		set                    Settings
		wantBound, wantAccount int
	}{
		{"the defaults", Settings{}, DefaultSubscriptionConnections, 100},
		{"a tenth of the bound", Settings{SubscriptionConnections: 20}, 20, 2},
		{"rounded up", Settings{SubscriptionConnections: 25}, 25, 3},
		{"at least one", Settings{SubscriptionConnections: 1}, 1, 1},
		{"its own setting", Settings{SubscriptionConnections: 20, SubscriptionConnectionsPerAccount: 7}, 20, 7},
		{"the whole bound", Settings{SubscriptionConnectionsPerAccount: DefaultSubscriptionConnections}, DefaultSubscriptionConnections, DefaultSubscriptionConnections},
	} {
		t.Run(c.name, func(t *testing.T) {
			bound, account := c.set.SubscriptionShares()
			if bound != c.wantBound || account != c.wantAccount {
				t.Errorf("SubscriptionShares() = %d, %d; want %d, %d", bound, account, c.wantBound, c.wantAccount)
			}
			if err := c.set.checkShares(); err != nil {
				t.Errorf("checkShares: %v", err)
			}
		})
	}
	for _, bad := range []Settings{
		{SubscriptionConnectionsPerAccount: -1},
		{SubscriptionConnectionsPerAccount: DefaultSubscriptionConnections + 1},
		{SubscriptionConnections: 10, SubscriptionConnectionsPerAccount: 11},
	} {
		if err := bad.checkShares(); err == nil || !strings.Contains(err.Error(), "subscriptionConnectionsPerAccount must be between 0") {
			t.Errorf("%+v: %v, want an error naming subscriptionConnectionsPerAccount", bad, err)
		}
	}
}
