/* The viewer's files, embedded in the convoy binary (analyzer/html.c), each
 * followed by a NUL. Assembled from the repository root, where the paths
 * below resolve. */
	.section .rodata
	.global cv__viewer_page, cv__viewer_css, cv__viewer_js
	.type cv__viewer_page, @object
	.type cv__viewer_css, @object
	.type cv__viewer_js, @object
cv__viewer_page:
	.incbin "viewer/page.html"
	.byte 0
cv__viewer_css:
	.incbin "viewer/convoy.css"
	.byte 0
cv__viewer_js:
	.incbin "viewer/convoy.js"
	.byte 0
	.section .note.GNU-stack, "", @progbits
