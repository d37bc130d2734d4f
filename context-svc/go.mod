module github.com/svcdev/svc/context-svc

go 1.26

require (
	github.com/go-git/go-git/v5 v5.19.3
	github.com/svcdev/svc/pkg v0.0.0
)

replace github.com/svcdev/svc/pkg => ../pkg
