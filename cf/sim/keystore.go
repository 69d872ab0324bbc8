package sim

import (
	"encoding/json"
	"slices"
	"time"
)

// Key is a credential binding to a managed service instance: a service
// key (type key), or with AppGUID an app's binding (type app).
// Credentials, SyslogDrainURL and VolumeMounts are what the broker
// answered (nil = absent).
type Key struct {
	GUID, Name, InstanceGUID string
	AppGUID                  string // "" for a service key
	Credentials              json.RawMessage
	SyslogDrainURL           *string
	VolumeMounts             json.RawMessage
	LastOperation            LastOperation
	CreatedAt, UpdatedAt     time.Time
}

// The foundation's keys, as the key routes use them: functions, so that
// Foundation keeps to the methods tests call.

// getKey is a key by guid.
func getKey(f *Foundation, guid string) (Key, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.keys.get(guid)
}

// keyNamed is the instance's service key of that name.
func keyNamed(f *Foundation, instanceGUID, name string) (Key, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	i := slices.IndexFunc(f.keys.list, func(k Key) bool { return k.InstanceGUID == instanceGUID && k.AppGUID == "" && k.Name == name })
	if i < 0 {
		return Key{}, false
	}
	return f.keys.list[i], true
}

// keysOf are the instance's keys and app bindings.
func keysOf(f *Foundation, instanceGUID string) []Key {
	f.mu.RLock()
	defer f.mu.RUnlock()
	var out []Key
	for _, k := range f.keys.list {
		if k.InstanceGUID == instanceGUID {
			out = append(out, k)
		}
	}
	return out
}

// putKey adds a key, replacing one of the same guid; old ("" = none) goes.
func putKey(f *Foundation, k Key, old string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if old != "" {
		f.keys.remove(old)
	}
	if _, ok := f.keys.get(k.GUID); ok {
		f.keys.set(k.GUID, k)
		return
	}
	_ = f.keys.add(k.GUID, k)
}

// updateKey changes a key that still exists.
func updateKey(f *Foundation, guid string, change func(*Key)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if k, ok := f.keys.get(guid); ok {
		change(&k)
		f.keys.set(guid, k)
	}
}

// removeKey deletes a key.
func removeKey(f *Foundation, guid string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys.remove(guid)
}

// keyLink links a job to a key while it exists.
func keyLink(f *Foundation, guid string) jobLink {
	return jobLink{"service_credential_bindings", "/v3/service_credential_bindings/" + guid, func() bool { _, ok := getKey(f, guid); return ok }}
}

// hasAppBindings says whether an app is bound to the instance.
func hasAppBindings(f *Foundation, instanceGUID string) bool {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return slices.ContainsFunc(f.keys.list, func(k Key) bool { return k.InstanceGUID == instanceGUID && k.AppGUID != "" })
}
