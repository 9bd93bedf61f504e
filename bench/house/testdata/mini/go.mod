module example.com/mini

go 1.25
