module github.com/hashicorp/go-discover

go 1.26
