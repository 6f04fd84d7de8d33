(function () {
  "use strict";
  var form = document.getElementById("disagreement-filter");
  var table = document.getElementById("disagreement-table");
  if (!form || !table) { return; }
  var search = form.querySelector("input");
  var code = form.querySelector("select");
  var shown = document.getElementById("disagreement-shown");
  var rows = Array.prototype.slice.call(table.tBodies[0].rows);
  function matches(row, query, wanted) {
    if (query && row.textContent.toLowerCase().indexOf(query) === -1) { return false; }
    if (!wanted) { return true; }
    return Array.prototype.some.call(row.querySelectorAll("td.code"), function (cell) {
      return cell.textContent === wanted;
    });
  }
  function apply() {
    var query = search.value.trim().toLowerCase();
    var count = 0;
    rows.forEach(function (row) {
      var keep = matches(row, query, code.value);
      row.hidden = !keep;
      if (keep) { count += 1; }
    });
    shown.textContent = count + " of " + rows.length + " shown";
  }
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  search.addEventListener("input", apply);
  code.addEventListener("change", apply);
  form.hidden = false;
  apply();
}());
