package sim

import (
	"math"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// Pagination bounds of the Cloud Controller (PaginationOptions).
const (
	defaultPerPage = 50
	maxPerPage     = 5000
)

// listKind describes the query parameters a list route takes, as its CC
// ListMessage declares them.
type listKind struct {
	// allowed are the message's allowed keys in CC's order (for the
	// "Valid parameters are" detail).
	allowed []string
	// simulated are the allowed keys the simulator filters by; the others
	// are answered 400 (see README, "Not simulated").
	simulated []string
	// fields are the fields[RESOURCE] selectors CC allows (nil: no fields
	// parameter); simFields those the simulator serves.
	fields    map[string][]string
	fieldKeys []string // fields' resources in CC's order
	simFields []string
	// typed says the route takes type=managed|user-provided.
	typed bool
	// includes are the include values CC takes, when the simulator serves
	// include (IncludeParamValidator's valid_values).
	includes []string
}

var listBase = []string{"page", "per_page", "order_by", "created_ats", "updated_ats", "guids"}

var (
	brokersKind = listKind{
		allowed:   append(slices.Clip(listBase), "space_guids", "names", "label_selector"),
		simulated: []string{"guids", "names", "space_guids"},
	}
	offeringsKind = listKind{
		allowed: append(slices.Clip(listBase), "available", "fields", "broker_catalog_ids", "service_broker_guids",
			"service_broker_names", "names", "space_guids", "organization_guids", "label_selector"),
		simulated: []string{"guids", "names", "broker_catalog_ids", "service_broker_guids", "service_broker_names",
			"available", "space_guids", "organization_guids"},
		fields:    map[string][]string{"service_broker": {"guid", "name"}},
		fieldKeys: []string{"service_broker"},
		simFields: []string{"service_broker"},
	}
	plansKind = listKind{
		allowed: append(slices.Clip(listBase), "available", "fields", "broker_catalog_ids", "names", "organization_guids",
			"service_broker_guids", "service_broker_names", "service_instance_guids", "service_offering_guids",
			"service_offering_names", "space_guids", "include", "label_selector"),
		simulated: []string{"guids", "names", "broker_catalog_ids", "service_broker_guids", "service_broker_names",
			"service_instance_guids", "service_offering_guids", "service_offering_names", "available", "space_guids",
			"organization_guids", "include"},
		fields:    map[string][]string{"service_offering.service_broker": {"guid", "name"}},
		fieldKeys: []string{"service_offering.service_broker"},
		simFields: []string{"service_offering.service_broker"},
		includes:  []string{"space.organization", "service_offering"},
	}
	instancesKind = listKind{
		allowed: append(slices.Clip(listBase), "type", "fields", "names", "space_guids", "organization_guids",
			"service_plan_guids", "service_plan_names", "label_selector"),
		simulated: []string{"guids", "names", "space_guids", "organization_guids", "service_plan_guids", "service_plan_names", "type",
			"order_by"},
		fields: map[string][]string{
			"space":                         {"guid", "name", "relationships.organization"},
			"space.organization":            {"name", "guid"},
			"service_plan":                  {"guid", "name", "relationships.service_offering"},
			"service_plan.service_offering": {"name", "guid", "description", "documentation_url", "tags", "relationships.service_broker"},
			"service_plan.service_offering.service_broker": {"name", "guid"},
		},
		fieldKeys: []string{"space", "space.organization", "service_plan", "service_plan.service_offering",
			"service_plan.service_offering.service_broker"},
		simFields: []string{"space", "space.organization", "service_plan", "service_plan.service_offering",
			"service_plan.service_offering.service_broker"},
		typed: true,
	}
)

// listQuery is a parsed and validated list request.
type listQuery struct {
	page, perPage int64
	filters       map[string][]string // array filters, by key
	typ           string              // type= ("" = none)
	hasType       bool
	fields        map[string][]string // fields[RESOURCE] selectors
	links         url.Values          // the parameters pagination links repeat (all but page and per_page)
}

// parseList reads a list query as the route's ListMessage does; detail is
// the BadQueryParameter detail when it is refused.
func (k listKind) parseList(rawQuery string) (q listQuery, detail string, ok bool) {
	vals, err := url.ParseQuery(rawQuery)
	if err != nil {
		return q, "invalid query string", false
	}
	q = listQuery{page: 1, perPage: defaultPerPage, filters: map[string][]string{}, fields: map[string][]string{}, links: url.Values{}}
	var errs, unknown, unsimulated []string
	page, hasPage := last(vals, "page")
	perPage, hasPerPage := last(vals, "per_page")
	if hasPage {
		if q.page = rubyToI(page); q.page <= 0 {
			errs = append(errs, "Page must be a positive integer")
		}
	}
	if hasPerPage {
		switch q.perPage = rubyToI(perPage); {
		case q.perPage <= 0:
			errs = append(errs, "Per page must be a positive integer")
		case q.perPage > maxPerPage:
			errs = append(errs, "Per page must be between 1 and 5000")
		}
	}
	if q.page > 0 && q.perPage > 0 && q.page > math.MaxInt64/q.perPage {
		errs = append(errs, "Maximum result (page * per_page) must be less than 9223372036854775807")
	}
	var fieldsScalar bool
	for _, key := range sortedKeys(vals) {
		base, sub, bracketed := splitBracket(key)
		value := vals[key][len(vals[key])-1]
		switch {
		case key == "page" || key == "per_page":
		case bracketed && base == "fields" && k.fields != nil:
			q.fields[sub] = splitList(value)
			q.links.Set(key, value)
		case bracketed || !slices.Contains(k.allowed, key):
			unknown = append(unknown, base)
		case key == "fields":
			fieldsScalar = true
		case !slices.Contains(k.simulated, key):
			unsimulated = append(unsimulated, key)
		case key == "type":
			q.typ, q.hasType = value, true
			q.links.Set(key, value)
		case key == "available": // a single key: not split
			q.filters[key] = []string{value}
			q.links.Set(key, value)
		default:
			q.filters[key] = splitList(value)
			q.links.Set(key, joinList(q.filters[key]))
		}
	}
	if len(unknown) > 0 {
		errs = append(errs, "Unknown query parameter(s): '"+strings.Join(unknown, "', '")+"'. Valid parameters are: '"+
			strings.Join(k.allowed, "', '")+"'")
	}
	if k.typed && q.hasType && q.typ != TypeManaged && q.typ != TypeUserProvided {
		errs = append(errs, "Type must be one of 'managed', 'user-provided'")
	}
	errs = append(errs, k.checkIncludes(q.filters["include"])...)
	if v, ok := q.filters["available"]; ok && v[0] != "true" && v[0] != "false" {
		errs = append(errs, "Available must be 'true' or 'false'")
	}
	errs = append(errs, k.checkFields(q.fields, fieldsScalar, &unsimulated)...)
	if len(errs) == 0 && len(unsimulated) > 0 {
		errs = append(errs, "'"+strings.Join(unsimulated, "', '")+"' is not simulated by cf/sim")
	}
	if len(errs) > 0 {
		return q, strings.Join(errs, ", "), false
	}
	return q, "", true
}

// checkFields validates fields[RESOURCE] as CC's FieldsValidator does.
func (k listKind) checkFields(fields map[string][]string, scalar bool, unsimulated *[]string) []string {
	if scalar {
		return []string{"Fields must be an object"}
	}
	var errs []string
	for _, res := range sortedKeys(fields) {
		allowed, ok := k.fields[res]
		switch {
		case !ok:
			errs = append(errs, "Fields ["+res+"] valid resources are: '"+strings.Join(k.fieldKeys, "', '")+"'")
		case !subset(fields[res], allowed):
			errs = append(errs, "Fields valid keys for '"+res+"' are: '"+strings.Join(allowed, "', '")+"'")
		case !slices.Contains(k.simFields, res):
			*unsimulated = append(*unsimulated, "fields["+res+"]")
		}
	}
	return errs
}

// checkIncludes validates include as CC's IncludeParamValidator does.
func (k listKind) checkIncludes(include []string) []string {
	var errs []string
	seen := map[string]int{}
	for _, v := range include {
		if !slices.Contains(k.includes, v) {
			errs = append(errs, "Invalid included resource: '"+v+"'. Valid included resources are: '"+strings.Join(k.includes, "', '")+"'")
			continue
		}
		if seen[v]++; seen[v] == 2 {
			errs = append(errs, "Duplicate included resource: '"+v+"'")
		}
	}
	return errs
}

func subset(xs, of []string) bool {
	for _, x := range xs {
		if !slices.Contains(of, x) {
			return false
		}
	}
	return true
}

// last is the last value of key (Rack keeps the last of repeated keys).
func last(vals url.Values, key string) (string, bool) {
	v, ok := vals[key]
	if !ok {
		return "", false
	}
	return v[len(v)-1], true
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// splitBracket splits "fields[space]" into "fields" and "space".
func splitBracket(key string) (base, sub string, ok bool) {
	i := strings.IndexByte(key, '[')
	if i < 0 {
		return key, "", false
	}
	if i > 0 && strings.HasSuffix(key, "]") {
		return key[:i], key[i+1 : len(key)-1], true
	}
	return key[:max(i, 1)], "", true
}

var listSep = regexp.MustCompile(`,\s*`)

// splitList splits a filter value as CC's to_array! does: on commas (and
// the spaces after them), each part percent-decoded once more, so that a
// comma inside a value is sent as %2C (itself escaped: %252C).
func splitList(v string) []string {
	if v == "" {
		return []string{""}
	}
	parts := listSep.Split(v, -1)
	for i, p := range parts {
		parts[i] = percentDecode(p)
	}
	return parts
}

// joinList is CC's to_param_hash for an array: commas inside values
// escaped as %2C, values joined by commas.
func joinList(vs []string) string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = strings.ReplaceAll(v, ",", "%2C")
	}
	return strings.Join(out, ",")
}

// percentDecode decodes valid %XX sequences and leaves the rest, as
// Addressable::URI.unescape does.
func percentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// rubyToI is Ruby's String#to_i: leading whitespace, an optional sign and
// the leading digits ("12abc" is 12, "abc" is 0); values beyond int64 are
// clamped.
func rubyToI(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\v\f\r")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg, s = s[0] == '-', s[1:]
	}
	var n int64
	for i := 0; i < len(s) && '0' <= s[i] && s[i] <= '9'; i++ {
		if n > (math.MaxInt64-int64(s[i]-'0'))/10 {
			n = math.MaxInt64
			continue
		}
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		return -n
	}
	return n
}
