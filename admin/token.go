package admin

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/corehq/core/auth"
	"github.com/corehq/core/store"
)

// Where the hash of a generated admin token is kept.
const (
	docService    = "service"
	keyAdminToken = "admin-token"
)

// MinTokenLen is the shortest admin token accepted from the operator.
const MinTokenLen = 16

type tokenDoc struct {
	SHA256 string `json:"sha256"`
}

// SetupToken returns the hash of the admin token the service runs with.
// A given token (CORE_ADMIN_TOKEN, --admin-token) is used as is and nothing
// is stored. Without one, the hash stored by an earlier start is used;
// on the first start a token is generated, its hash stored, and the token
// returned as generated for the caller to show once.
func SetupToken(ctx context.Context, st store.Store, given string) (hash [32]byte, generated string, err error) {
	if given != "" {
		if len(given) < MinTokenLen {
			return hash, "", fmt.Errorf("admin: the admin token must be at least %d characters", MinTokenLen)
		}
		return auth.HashToken(given), "", nil
	}
	raw, err := st.GetDoc(ctx, docService, keyAdminToken)
	if errors.Is(err, store.ErrNotFound) {
		// First start: generate a token and create its hash if no other
		// process has meanwhile; the one stored is the one in force, and
		// a token is shown only by the process whose hash it is.
		var mine []byte
		generated, hash = auth.NewToken()
		if mine, err = json.Marshal(tokenDoc{SHA256: hex.EncodeToString(hash[:])}); err != nil {
			return hash, "", fmt.Errorf("admin: encoding the admin token hash: %w", err)
		}
		if raw, err = st.CreateDoc(ctx, docService, keyAdminToken, mine); err != nil {
			return hash, "", fmt.Errorf("admin: storing the admin token hash: %w", err)
		}
		if !bytes.Equal(raw, mine) {
			generated = ""
		}
	} else if err != nil {
		return hash, "", fmt.Errorf("admin: reading the admin token hash: %w", err)
	}
	var d tokenDoc
	if err := json.Unmarshal(raw, &d); err != nil {
		return hash, "", fmt.Errorf("admin: decoding the stored admin token hash: %w", err)
	}
	b, err := hex.DecodeString(d.SHA256)
	if err != nil || len(b) != len(hash) {
		return hash, "", errors.New("admin: the stored admin token hash is malformed")
	}
	copy(hash[:], b)
	return hash, generated, nil
}
