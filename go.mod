module github.com/toolmw/toolmw

go 1.25.5
