(function () {
  "use strict";
  // The disagreement list: search, narrow by a coder's code or by the split, sort by a column, and
  // follow a click on a heat-map or pairwise-matrix cell; a long list is shown PAGE rows at a time.
  // Without this script (and on paper) every row is shown.
  var form = document.getElementById("disagreement-filter");
  var table = document.getElementById("disagreement-table");
  if (!form || !table) { return; }
  var search = form.querySelector("input");
  var coder = form.querySelector("select[name=coder]");
  var code = form.querySelector("select[name=code]");
  var split = form.querySelector("select[name=split]");
  var cellNote = document.getElementById("disagreement-cell");
  var clear = document.getElementById("disagreement-clear");
  var shown = document.getElementById("disagreement-shown");
  var more = document.getElementById("disagreement-more");
  var PAGE = 50;
  var limit = PAGE;
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var cell = null;  // the clicked heat-map cell's filter, or null
  var selected = null;

  function codesOf(row) {
    var codes = {};
    Array.prototype.forEach.call(row.querySelectorAll("td.code"), function (td) {
      codes[td.getAttribute("data-coder")] = td.getAttribute("data-code");
    });
    return codes;
  }
  function values(codes) {
    return Object.keys(codes).map(function (key) { return codes[key]; });
  }
  function matchesCell(codes) {
    if (cell.rowCoder && cell.rowCode) {  // a two-coder table: these two coders gave these two codes
      return codes[cell.rowCoder] === cell.rowCode && codes[cell.columnCoder] === cell.columnCode;
    }
    if (cell.rowCoder) {  // a pairwise-kappa cell: these two coders differ
      return codes[cell.rowCoder] !== codes[cell.columnCoder];
    }
    var given = values(codes);  // a coincidence-matrix cell: both codes were given to the unit
    return given.indexOf(cell.rowCode) !== -1 && given.indexOf(cell.columnCode) !== -1;
  }
  function matches(row, query) {
    if (query && row.textContent.toLowerCase().indexOf(query) === -1) { return false; }
    var codes = codesOf(row);
    if (code.value) {
      if (coder.value) {
        if (codes[coder.value] !== code.value) { return false; }
      } else if (values(codes).indexOf(code.value) === -1) { return false; }
    }
    if (split && split.value) {
      var td = row.querySelector("td.split");
      if (!td || td.textContent !== split.value) { return false; }
    }
    return !cell || matchesCell(codes);
  }
  function apply() {
    var query = search.value.trim().toLowerCase();
    var count = 0;
    Array.prototype.forEach.call(body.rows, function (row) {
      var keep = matches(row, query);
      if (keep) { count += 1; }
      row.hidden = !keep || count > limit;
    });
    var listed = Math.min(count, limit);
    shown.textContent = listed + " of " + rows.length + " shown" + (count > limit ? " (" + count + " match)" : "");
    more.hidden = count <= limit;
    more.textContent = "show " + Math.min(PAGE, count - limit) + " more";
    clear.hidden = !(cell || query || code.value || coder.value || (split && split.value));
  }
  function restart() {
    limit = PAGE;
    apply();
  }
  function describe(data) {
    if (data.rowCoder && data.rowCode) {
      return data.rowCoder + " " + data.rowCode + ", " + data.columnCoder + " " + data.columnCode;
    }
    if (data.rowCoder) { return data.rowCoder + " and " + data.columnCoder + " differ"; }
    return "codes " + data.rowCode + " and " + data.columnCode;
  }
  Array.prototype.forEach.call(document.querySelectorAll("td.filters"), function (td) {
    td.setAttribute("tabindex", "0");
    td.setAttribute("title", "List these disagreements");
    function choose() {
      if (selected) { selected.classList.remove("selected"); }
      selected = td;
      td.classList.add("selected");
      cell = {
        rowCode: td.getAttribute("data-row-code"), columnCode: td.getAttribute("data-column-code"),
        rowCoder: td.getAttribute("data-row-coder"), columnCoder: td.getAttribute("data-column-coder")
      };
      cellNote.textContent = "Cell: " + describe(cell) + ".";
      cellNote.hidden = false;
      restart();
      form.scrollIntoView();
    }
    td.addEventListener("click", choose);
    td.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); choose(); }
    });
  });
  clear.addEventListener("click", function () {
    cell = null;
    if (selected) { selected.classList.remove("selected"); selected = null; }
    cellNote.hidden = true;
    search.value = "";
    coder.value = "";
    code.value = "";
    if (split) { split.value = ""; }
    restart();
  });
  more.addEventListener("click", function () {
    limit += PAGE;
    apply();
  });
  // Sorting: a click on a column's head sorts by it, again to reverse; ties keep the report's order.
  var heads = Array.prototype.slice.call(table.tHead.rows[0].cells);
  rows.forEach(function (row, index) { row.setAttribute("data-order", String(index)); });
  heads.forEach(function (head, column) {
    head.setAttribute("tabindex", "0");
    function sort() {
      var descending = head.getAttribute("aria-sort") === "ascending";
      heads.forEach(function (other) { other.removeAttribute("aria-sort"); });
      head.setAttribute("aria-sort", descending ? "descending" : "ascending");
      var sorted = rows.slice().sort(function (a, b) {
        var x = a.cells[column].textContent, y = b.cells[column].textContent;
        var order = x < y ? -1 : (x > y ? 1 : 0);
        if (descending) { order = -order; }
        return order || Number(a.getAttribute("data-order")) - Number(b.getAttribute("data-order"));
      });
      sorted.forEach(function (row) { body.appendChild(row); });
      apply();
    }
    head.addEventListener("click", sort);
    head.addEventListener("keydown", function (event) {
      if (event.key === "Enter" || event.key === " ") { event.preventDefault(); sort(); }
    });
  });
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  search.addEventListener("input", restart);
  [coder, code, split].forEach(function (select) { if (select) { select.addEventListener("change", restart); } });
  form.hidden = false;
  apply();
}());
