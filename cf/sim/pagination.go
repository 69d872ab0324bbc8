package sim

import (
	"net/url"
	"strconv"
	"strings"
)

// href is a link object.
type href struct {
	Href string `json:"href"`
}

// pagination is the pagination object of every list.
type pagination struct {
	TotalResults int   `json:"total_results"`
	TotalPages   int64 `json:"total_pages"`
	First        href  `json:"first"`
	Last         href  `json:"last"`
	Next         *href `json:"next"`
	Previous     *href `json:"previous"`
}

// pageOf returns the page q asks for out of total results: the bounds of
// the slice and the pagination object, built as CC's
// PaginatedListPresenter builds it.
func (a *api) pageOf(path string, q listQuery, total int) (lo, hi int, p pagination) {
	lastPage := (int64(total) + q.perPage - 1) / q.perPage
	lastPage = max(lastPage, 1)
	link := func(page int64) string {
		v := url.Values{}
		for k, vs := range q.links {
			v[k] = vs
		}
		v.Set("per_page", strconv.FormatInt(q.perPage, 10))
		v.Set("page", strconv.FormatInt(page, 10))
		return a.url + path + "?" + toQuery(v)
	}
	p = pagination{TotalResults: total, TotalPages: lastPage, First: href{link(1)}, Last: href{link(lastPage)}}
	if q.page+1 <= lastPage {
		p.Next = &href{link(q.page + 1)}
	}
	if q.page-1 > 0 {
		p.Previous = &href{link(q.page - 1)}
	}
	lo64 := min((q.page-1)*q.perPage, int64(total))
	hi64 := min(lo64+q.perPage, int64(total))
	return int(lo64), int(hi64), p
}

// toQuery is ActiveSupport's Hash#to_query: keys sorted, each key and
// value escaped as Ruby's CGI.escape escapes them.
func toQuery(v url.Values) string {
	parts := make([]string, 0, len(v))
	for _, k := range sortedKeys(v) {
		parts = append(parts, cgiEscape(k)+"="+cgiEscape(v.Get(k)))
	}
	return strings.Join(parts, "&")
}

// cgiEscape is Ruby's CGI.escape: letters, digits and "*-._" kept, space
// as "+", every other byte as %XX.
func cgiEscape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9', strings.IndexByte("*-._", ch) >= 0:
			b.WriteByte(ch)
		case ch == ' ':
			b.WriteByte('+')
		default:
			b.WriteByte('%')
			b.WriteByte(hex[ch>>4])
			b.WriteByte(hex[ch&15])
		}
	}
	return b.String()
}
