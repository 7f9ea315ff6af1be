package hooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"strconv"
)

// Sign returns the webhook-signature header of a message per the
// Standard Webhooks specification: "v1," and the standard base64 of the
// HMAC-SHA256, keyed by the secret's key, of "{id}.{timestamp}.{body}".
func Sign(key []byte, id string, timestamp int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write([]byte(strconv.FormatInt(timestamp, 10)))
	m.Write([]byte{'.'})
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}
