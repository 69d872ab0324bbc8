package cf

import (
	"context"
	"fmt"
	"net/url"
)

// Page is one answer of a v3 list: R the resources, I the included object.
type Page[R, I any] struct {
	Pagination *struct {
		TotalResults int `json:"total_results"`
		Next         *struct {
			Href string `json:"href"`
		} `json:"next"`
	} `json:"pagination"`
	Resources []R `json:"resources"`
	Included  I   `json:"included"`
}

// DecodePage decodes one page; one without its pagination object is refused.
func DecodePage[R, I any](endpoint string, body []byte) (Page[R, I], error) {
	var p Page[R, I]
	if err := decode(endpoint, body, &p); err != nil {
		return Page[R, I]{}, err
	}
	if p.Pagination == nil {
		return Page[R, I]{}, &unavailable{fmt.Errorf("cloud controller: GET %s: the answer is not a list page", endpoint)}
	}
	return p, nil
}

// list reads every page from first on, following next links toward the
// API only, handing each page to each. A listing is whole only when its
// pages hold as many resources as its first page's total_results says:
// otherwise it is an error (ErrUnavailable: read it again), so that a
// platform that leaves instances out is never read as one without them.
func list[R, I any](ctx context.Context, c *Client, endpoint string, first *url.URL, each func(Page[R, I]) error) error {
	seen := map[string]bool{}
	read, announced := 0, -1
	for u := first; u != nil; {
		if len(seen) == MaxPages {
			return fmt.Errorf("cloud controller: GET %s: more than %d pages: %w", endpoint, MaxPages, ErrAnswerTooLarge)
		}
		seen[u.String()] = true
		res, err := c.get(ctx, endpoint, u)
		if err != nil {
			return err
		}
		p, err := DecodePage[R, I](endpoint, res.body)
		if err != nil {
			return err
		}
		if announced < 0 {
			announced = p.Pagination.TotalResults
		}
		read += len(p.Resources)
		if err := each(p); err != nil {
			return err
		}
		if u, err = c.next(endpoint, p, seen); err != nil {
			return err
		}
	}
	if read != announced {
		return &unavailable{fmt.Errorf("cloud controller: GET %s: the pages hold %d resources, the first announced %d (total_results): not a whole listing", endpoint, read, announced)}
	}
	return nil
}

// next is the page's next link, nil at the end; a link toward another
// scheme or host, or one already read, is refused.
func (c *Client) next(endpoint string, p interface{ nextHref() (string, bool) }, seen map[string]bool) (*url.URL, error) {
	href, ok := p.nextHref()
	if !ok {
		return nil, nil
	}
	u, err := url.Parse(href)
	switch {
	case err != nil || !c.sameOrigin(u):
		return nil, fmt.Errorf("cloud controller: GET %s: next link %q is not on %s: %w", endpoint, clean(href), c.api, ErrUnsafeLink)
	case u.Path != endpoint:
		return nil, fmt.Errorf("cloud controller: GET %s: next link %q leaves the list: %w", endpoint, clean(href), ErrUnsafeLink)
	case seen[u.String()]:
		return nil, fmt.Errorf("cloud controller: GET %s: next link %q was read before: %w", endpoint, clean(href), ErrUnsafeLink)
	}
	return u, nil
}

func (p Page[R, I]) nextHref() (string, bool) {
	if p.Pagination == nil || p.Pagination.Next == nil || p.Pagination.Next.Href == "" {
		return "", false
	}
	return p.Pagination.Next.Href, true
}

// apiURL is the API's path with query q.
func (c *Client) apiURL(path string, q url.Values) *url.URL {
	u := *c.api
	u.Path, u.RawQuery = path, q.Encode()
	return &u
}
