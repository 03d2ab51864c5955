// The passage item kind of the reviewer's workspace (workspace.js): a section with the passage highlighted in it,
// graded on each of the kind's grades. Its answer is the grades and the note alone, which the core keeps; the
// arrow keys, away from a choice, move between the grades and to the next or previous item.
(function () {
  "use strict";
  window.ReviewWorkspace.register({ arrowsNavigate: true });
})();
