package config

import (
	"bytes"
	"fmt"
	"maps"
	"net/url"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// RedactedValue replaces every non-empty secret in Redacted's copy.
const RedactedValue = "<redacted>"

// Redacted returns a deep copy of c with every secret that is set replaced by
// RedactedValue: broker.password, vault.token, bosh.password,
// bosh.client_secret (of every Director), cf.client_secret, metrics.password,
// notifications.webhook_secret and every notifications.webhooks[].secret.
// Unset secrets stay empty. In every URL (vault.address, each Director's
// address, cf.api, the webhooks), user info and the values of the query
// string are redacted too: a webhook's token often rides in its query.
func (c *Config) Redacted() *Config {
	out := *c
	out.Catalog.Dirs = slices.Clone(c.Catalog.Dirs)
	out.Reconciler.Releases = maps.Clone(c.Reconciler.Releases)
	out.Reconciler.Rules = slices.Clone(c.Reconciler.Rules)
	out.Reconciler.Ignore = slices.Clone(c.Reconciler.Ignore)
	out.Notifications.Webhooks = slices.Clone(c.Notifications.Webhooks)
	for i := range out.Notifications.Webhooks {
		w := &out.Notifications.Webhooks[i]
		w.Events = slices.Clone(w.Events)
		w.URL = redactURL(w.URL)
		if w.Secret != "" {
			w.Secret = RedactedValue
		}
	}
	out.MoreDirectors = slices.Clone(c.MoreDirectors)
	secrets := []*string{
		&out.Broker.Password, &out.Vault.Token, &out.BOSH.Password,
		&out.BOSH.ClientSecret, &out.CF.ClientSecret, &out.Metrics.Password, &out.Notifications.WebhookSecret,
		&out.Operator.Admin.Password, &out.Operator.Viewer.Password,
	}
	for i := range out.MoreDirectors {
		secrets = append(secrets, &out.MoreDirectors[i].Password, &out.MoreDirectors[i].ClientSecret)
	}
	for _, s := range secrets {
		if *s != "" {
			*s = RedactedValue
		}
	}
	urls := []*string{&out.Vault.Address, &out.BOSH.Address, &out.CF.API, &out.Notifications.WebhookURL}
	for i := range out.MoreDirectors {
		urls = append(urls, &out.MoreDirectors[i].Address)
	}
	for _, u := range urls {
		*u = redactURL(*u)
	}
	return &out
}

// redactURL is raw with its user info and the value of each query
// parameter replaced by RedactedValue (the keys stay: they say what was
// set; a parameter without "=" is redacted whole), and so is its fragment. What does not parse as a URL is redacted whole when it could hold
// either.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || strings.Contains(u.Opaque, "@") { // "user:pw@host" is scheme "user", opaque "pw@host"
		if strings.ContainsAny(raw, "@?") {
			return RedactedValue
		}
		return raw
	}
	var b strings.Builder
	if u.Scheme != "" {
		b.WriteString(u.Scheme + ":")
	}
	if u.Opaque != "" {
		b.WriteString(u.Opaque)
	} else {
		if u.Scheme != "" || u.Host != "" || u.User != nil {
			b.WriteString("//")
		}
		if u.User != nil {
			b.WriteString(RedactedValue + "@")
		}
		b.WriteString(u.Host + u.EscapedPath())
	}
	if u.ForceQuery || u.RawQuery != "" {
		b.WriteString("?")
	}
	if u.RawQuery != "" {
		params := strings.Split(u.RawQuery, "&")
		for i, kv := range params {
			if key, _, ok := strings.Cut(kv, "="); ok {
				params[i] = key + "=" + RedactedValue
			} else {
				params[i] = RedactedValue // a bare token
			}
		}
		b.WriteString(strings.Join(params, "&"))
	}
	if u.Fragment != "" {
		b.WriteString("#" + RedactedValue)
	}
	return b.String()
}

// YAML renders c as a blacksmith.conf that Load reads back to the same
// configuration: every key, in the order of the structs, durations as Go
// durations. Call it on Redacted() for anything a person will see.
func (c *Config) YAML() ([]byte, error) {
	root, err := encode(reflect.ValueOf(*c))
	if err != nil {
		return nil, fmt.Errorf("encoding configuration: %w", err)
	}
	if len(c.MoreDirectors) > 0 { // several Directors: bosh is their list
		list, err := encode(reflect.ValueOf(c.Directors()))
		if err != nil {
			return nil, fmt.Errorf("encoding configuration: %w", err)
		}
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "bosh" {
				root.Content[i+1] = list
			}
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return nil, fmt.Errorf("encoding configuration: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("encoding configuration: %w", err)
	}
	return buf.Bytes(), nil
}

func encode(v reflect.Value) (*yaml.Node, error) {
	switch {
	case v.Type() == durationType:
		return scalarNode(formatDuration(time.Duration(v.Int())))
	case v.Kind() == reflect.Struct:
		return encodeStruct(v)
	case v.Kind() == reflect.Slice:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for i := range v.Len() {
			item, err := encode(v.Index(i))
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, item)
		}
		return n, nil
	case v.Kind() == reflect.Map:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		for _, k := range slices.Sorted(maps.Keys(v.Interface().(map[string]string))) {
			key, _ := scalarNode(k)
			val, _ := scalarNode(v.MapIndex(reflect.ValueOf(k)).String())
			n.Content = append(n.Content, key, val)
		}
		return n, nil
	}
	return scalarNode(v.Interface())
}

func encodeStruct(v reflect.Value) (*yaml.Node, error) {
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := range v.NumField() {
		if yamlKey(v.Type().Field(i)) == "-" {
			continue
		}
		key, _ := scalarNode(yamlKey(v.Type().Field(i)))
		val, err := encode(v.Field(i))
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, key, val)
	}
	return n, nil
}

func scalarNode(v any) (*yaml.Node, error) {
	n := &yaml.Node{}
	if err := n.Encode(v); err != nil {
		return nil, err
	}
	return n, nil
}

// formatDuration writes d as time.Duration.String does, without zero
// trailing units: 1h rather than 1h0m0s.
func formatDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

// CACertPEM returns the PEM text bosh.ca_cert stands for: the value itself
// when it holds PEM (as BOSH_CA_CERT may), else the file it names. It returns
// nil when no CA certificate is configured.
func (b BOSHConfig) CACertPEM() ([]byte, error) { return caCertPEM(b.CACert, "bosh") }

// CACertPEM returns the PEM text cf.ca_cert stands for, as BOSHConfig.CACertPEM
// does: the value itself when it holds PEM, else the file it names; nil when unset.
func (c CFConfig) CACertPEM() ([]byte, error) { return caCertPEM(c.CACert, "cf") }

func caCertPEM(value, section string) ([]byte, error) {
	if value == "" {
		return nil, nil
	}
	if isInlinePEM(value) {
		return []byte(value), nil
	}
	data, err := os.ReadFile(value)
	if err != nil {
		return nil, fmt.Errorf("reading %s CA certificate: %w", section, err)
	}
	return data, nil
}
