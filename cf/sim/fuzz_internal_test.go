package sim

import (
	"net/url"
	"strings"
	"testing"
)

// FuzzParseList: whatever the query, parsing it as each list route does
// not panic; an accepted query has page and per_page in range, and its
// pagination links parse back to the same filters, unless a value holds a
// '%': CC decodes filter values twice but escapes them once in its links,
// so such a value changes from page to page there too (FACTS.md).
func FuzzParseList(f *testing.F) {
	f.Add("per_page=5000&page=3&service_plan_guids=a,b&type=managed")
	f.Add("fields[space]=name,guid&fields[space.organization]=name")
	f.Add("names=a%252Cb,%20c&page=12abc&per_page=-0")
	f.Add("page=99999999999999999999&per_page=5000")
	f.Add("fields=x&foo[=1&[]=2&%zz")
	f.Fuzz(func(t *testing.T, raw string) {
		for _, k := range []listKind{brokersKind, offeringsKind, plansKind, instancesKind} {
			q, detail, ok := k.parseList(raw)
			if !ok {
				if detail == "" {
					t.Fatalf("refused %q without a detail", raw)
				}
				continue
			}
			if q.page < 1 || q.perPage < 1 || q.perPage > maxPerPage {
				t.Fatalf("accepted %q with page %d per_page %d", raw, q.page, q.perPage)
			}
			c := &api{url: "http://127.0.0.1:1"}
			_, _, p := c.pageOf("/v3/x", q, 7)
			u, err := url.Parse(p.First.Href)
			if err != nil {
				t.Fatalf("link %q: %v", p.First.Href, err)
			}
			back, detail, ok := k.parseList(u.RawQuery)
			if !ok {
				t.Fatalf("link %q of %q refused: %s", p.First.Href, raw, detail)
			}
			for key, vs := range q.filters {
				if strings.Contains(strings.Join(vs, ""), "%") {
					continue
				}
				if strings.Join(back.filters[key], "\x00") != strings.Join(vs, "\x00") {
					t.Fatalf("filter %s of %q: %q, link gives %q", key, raw, vs, back.filters[key])
				}
			}
		}
	})
}
