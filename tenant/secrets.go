package tenant

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
)

// Sealer seals the secrets an instance's document holds, its env values,
// so that the store keeps them only encrypted: a copy of the store (a
// backup, a dump) does not show them. keyring.Keeper is one; its keys
// live outside the store.
type Sealer interface {
	// Seal encrypts plain, bound to aad.
	Seal(plain []byte, aad string) string
	// Open decrypts what Seal made with the same aad; current reports
	// whether it was sealed with the key in use now.
	Open(sealed, aad string) (plain []byte, current bool, err error)
}

// WithSealer makes the directory store the instances' env values sealed
// by s, and open them when it loads.
func WithSealer(s Sealer) Option { return func(r *Directory) { r.sealer = s } }

// Sealer returns the directory's sealer, nil when it has none: what seals
// the other secrets instances keep in their records (event hook keys).
func (r *Directory) Sealer() Sealer { return r.sealer }

// envAAD binds a sealed env to its instance and field: the sealed value
// of one instance does not open as another's.
func envAAD(instanceID string) string { return "core instance env\x00" + instanceID }

// encodeInstance returns the stored form of an instance: its env sealed
// (when the directory has a sealer), never in clear.
func (r *Directory) encodeInstance(d instanceDoc) ([]byte, error) {
	d.SealedEnv, d.SealedSMTPPassword = "", ""
	d.Settings = d.Settings.clone()
	if m := d.Settings.SMTP; r.sealer != nil && m != nil && m.Password != "" {
		m.Password, d.SealedSMTPPassword = "", r.sealer.Seal([]byte(m.Password), smtpAAD(d.ID))
	}
	if r.sealer != nil && len(d.Settings.Env) > 0 {
		env, err := json.Marshal(d.Settings.Env)
		if err != nil {
			return nil, fmt.Errorf("tenant: encoding the env of instance %s: %w", d.Domain, err)
		}
		d.Settings.Env, d.SealedEnv = nil, r.sealer.Seal(env, envAAD(d.ID))
	}
	raw, err := json.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("tenant: encoding instance %s: %w", d.Domain, err)
	}
	return raw, nil
}

// decodeInstance reads a stored instance (key is its domain) with its env
// opened. stale reports that its env should be sealed again: sealed with
// a key that is no longer the active one, or stored in clear by a version
// before the key ring.
func (r *Directory) decodeInstance(key string, raw []byte) (d instanceDoc, stale bool, err error) {
	if err := json.Unmarshal(raw, &d); err != nil {
		return d, false, fmt.Errorf("tenant: instance %s: decoding: %w", key, err)
	}
	smtpStale, err := r.openSMTPPassword(key, &d)
	if err != nil {
		return d, false, err
	}
	if d.SealedEnv == "" {
		return d, smtpStale || r.sealer != nil && len(d.Settings.Env) > 0, nil
	}
	if r.sealer == nil {
		return d, false, fmt.Errorf("tenant: instance %s: its env is sealed, and the directory has no keys to open it", key)
	}
	plain, current, err := r.sealer.Open(d.SealedEnv, envAAD(d.ID))
	if err != nil {
		return d, false, fmt.Errorf("tenant: instance %s: opening its env (restore the key file that sealed it): %w", key, err)
	}
	var env map[string]string
	if err := json.Unmarshal(plain, &env); err != nil {
		return d, false, fmt.Errorf("tenant: instance %s: decoding its env: %w", key, err)
	}
	d.Settings.Env, d.SealedEnv = env, ""
	return d, !current || smtpStale, nil
}

// smtpAAD binds a sealed SMTP password to its instance and field.
func smtpAAD(instanceID string) string { return "core instance smtp password\x00" + instanceID }

// openSMTPPassword puts the opened SMTP password of a stored instance
// into its settings; stale as decodeInstance's.
func (r *Directory) openSMTPPassword(key string, d *instanceDoc) (stale bool, err error) {
	m := d.Settings.SMTP
	if d.SealedSMTPPassword == "" || m == nil {
		return r.sealer != nil && m != nil && m.Password != "", nil
	}
	if r.sealer == nil {
		return false, fmt.Errorf("tenant: instance %s: its smtp password is sealed, and the directory has no keys to open it", key)
	}
	plain, current, err := r.sealer.Open(d.SealedSMTPPassword, smtpAAD(d.ID))
	if err != nil {
		return false, fmt.Errorf("tenant: instance %s: opening its smtp password (restore the key file that sealed it): %w", key, err)
	}
	m.Password, d.SealedSMTPPassword = string(plain), ""
	return !current, nil
}

// Reseal stores again every instance whose env is stale (decodeInstance:
// sealed with a key other than the active one, or kept in clear by an
// older version), sealed with the active key, and returns how many it
// wrote. cmd/cored calls it at start and whenever the key ring changes,
// so that a key, once every process has picked up its successor, seals
// nothing any more and may be retired.
//
// Each document is read and written again at once, under the directory's
// lock; a change another process makes to the same instance within that
// moment can be overwritten (the store has no compare-and-swap for
// documents), which is why the operator's guide says to rotate keys while
// no instance settings are being changed.
func (r *Directory) Reseal(ctx context.Context) (int, error) {
	if r.sealer == nil {
		return 0, nil
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	docs, err := r.st.ListDocs(ctx, docInstance)
	if err != nil {
		return 0, fmt.Errorf("tenant: reading the instances: %w", err)
	}
	n := 0
	for _, key := range slices.Sorted(maps.Keys(docs)) {
		d, stale, err := r.decodeInstance(key, docs[key])
		if err != nil {
			return n, err
		}
		if !stale {
			continue
		}
		if err := r.putInstanceDoc(ctx, d); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
