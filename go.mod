module github.com/clrprof/clrprof

go 1.26

require (
	github.com/dave/jennifer v1.7.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	golang.org/x/tools v0.52.0 // indirect
)
