module github.com/svcdev/svc/deploy

go 1.26

require (
	github.com/svcdev/svc/gateway v0.0.0
	github.com/svcdev/svc/identity-svc v0.0.0
	github.com/svcdev/svc/mailbox-svc v0.0.0
	github.com/svcdev/svc/pkg v0.0.0
)

replace github.com/svcdev/svc/pkg => ../pkg

replace github.com/svcdev/svc/gateway => ../gateway

replace github.com/svcdev/svc/identity-svc => ../identity-svc

replace github.com/svcdev/svc/mailbox-svc => ../mailbox-svc
