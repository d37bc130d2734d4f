module github.com/svcdev/svc/deploy

go 1.26.0

require (
	github.com/svcdev/svc/gateway v0.0.0
	github.com/svcdev/svc/identity-svc v0.0.0
	github.com/svcdev/svc/pkg v0.0.0
)

require (
	github.com/santhosh-tekuri/jsonschema/v6 v6.0.3 // indirect
	golang.org/x/text v0.42.0 // indirect
)

replace github.com/svcdev/svc/pkg => ../pkg

replace github.com/svcdev/svc/gateway => ../gateway

replace github.com/svcdev/svc/identity-svc => ../identity-svc
