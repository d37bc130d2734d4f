module github.com/FerretDB/wire

go 1.22

toolchain go1.22.5

require (
	github.com/stretchr/testify v1.9.0
	github.com/xdg-go/scram v1.1.2
)

require (
	github.com/davecgh/go-spew v1.1.1 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/xdg-go/pbkdf2 v1.0.0 // indirect
	github.com/xdg-go/stringprep v1.0.4 // indirect
	golang.org/x/text v0.3.8 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
