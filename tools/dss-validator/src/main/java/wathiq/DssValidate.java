package wathiq;

import eu.europa.esig.dss.enumerations.Indication;
import eu.europa.esig.dss.enumerations.SignatureLevel;
import eu.europa.esig.dss.enumerations.SubIndication;
import eu.europa.esig.dss.jaxb.object.Message;
import eu.europa.esig.dss.model.FileDocument;
import eu.europa.esig.dss.pades.validation.PDFDocumentValidator;
import eu.europa.esig.dss.service.crl.OnlineCRLSource;
import eu.europa.esig.dss.service.http.commons.CommonsDataLoader;
import eu.europa.esig.dss.service.http.commons.OCSPDataLoader;
import eu.europa.esig.dss.service.ocsp.OnlineOCSPSource;
import eu.europa.esig.dss.simplereport.SimpleReport;
import eu.europa.esig.dss.simplereport.jaxb.XmlTimestamp;
import eu.europa.esig.dss.spi.DSSUtils;
import eu.europa.esig.dss.spi.validation.CommonCertificateVerifier;
import eu.europa.esig.dss.spi.x509.CommonTrustedCertificateSource;
import eu.europa.esig.dss.spi.x509.aia.DefaultAIASource;
import eu.europa.esig.dss.validation.reports.Reports;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;

/**
 * Validates PDFs with the EU's reference validator (DSS) and prints one JSON line per file:
 * {"file", "offline", "signatures": [{"id", "indication", "subIndication", "format", "errors", "warnings",
 *  "timestamps": [{"id", "indication", "subIndication", "productionTime"}]}], "timestamps": [...]} (the second
 *  list: time-stamps DSS reports on their own, if any).
 *
 * <p>Usage: java -jar dss-validator.jar --trust root.pem [--reports DIR] [--online|--offline] file.pdf...
 * The files after --offline are validated with no OCSP, CRL or AIA source: each must carry its own validation
 * data; --online (the default) switches the sources back on for the files after it. One JVM for many files.
 * With --reports the simple and detailed XML reports are written to DIR (for diagnosing a failure).
 */
public final class DssValidate {
  public static void main(String[] args) throws Exception {
    List<File> trust = new ArrayList<>();
    List<File> files = new ArrayList<>();
    List<Boolean> offlineFlags = new ArrayList<>();
    boolean offlineNow = false;
    File reports = null;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--trust" -> trust.add(new File(args[++i]));
        case "--offline" -> offlineNow = true;
        case "--online" -> offlineNow = false;
        case "--reports" -> reports = new File(args[++i]);
        default -> {
          files.add(new File(args[i]));
          offlineFlags.add(offlineNow);
        }
      }
    }
    if (trust.isEmpty() || files.isEmpty()) {
      System.err.println("usage: dss-validator --trust root.pem [--reports DIR] [--online|--offline] file.pdf...");
      System.exit(2);
    }
    CommonTrustedCertificateSource trusted = new CommonTrustedCertificateSource();
    for (File t : trust) trusted.addCertificate(DSSUtils.loadCertificate(t));

    for (int n = 0; n < files.size(); n++) {
      File f = files.get(n);
      boolean offline = offlineFlags.get(n);
      CommonCertificateVerifier verifier = new CommonCertificateVerifier();
      verifier.setTrustedCertSources(trusted);
      if (offline) {
        verifier.setOcspSource(null);
        verifier.setCrlSource(null);
        verifier.setAIASource(null);
      } else {
        CommonsDataLoader loader = new CommonsDataLoader();
        verifier.setOcspSource(new OnlineOCSPSource(new OCSPDataLoader()));
        verifier.setCrlSource(new OnlineCRLSource(loader));
        verifier.setAIASource(new DefaultAIASource(loader));
      }
      PDFDocumentValidator validator = new PDFDocumentValidator(new FileDocument(f));
      validator.setCertificateVerifier(verifier);
      Reports r = validator.validateDocument();
      SimpleReport simple = r.getSimpleReport();
      if (reports != null) {
        reports.mkdirs();
        String base = f.getName() + (offline ? ".offline" : ".online");
        Files.writeString(new File(reports, base + ".simple.xml").toPath(), r.getXmlSimpleReport(), StandardCharsets.UTF_8);
        Files.writeString(new File(reports, base + ".detailed.xml").toPath(), r.getXmlDetailedReport(), StandardCharsets.UTF_8);
      }
      StringBuilder out = new StringBuilder();
      out.append("{\"file\":").append(str(f.getPath())).append(",\"offline\":").append(offline);
      out.append(",\"signatures\":[");
      boolean first = true;
      for (String id : simple.getSignatureIdList()) {
        if (!first) out.append(',');
        first = false;
        SignatureLevel format = simple.getSignatureFormat(id);
        out.append("{\"id\":").append(str(id));
        out.append(",\"indication\":").append(str(name(simple.getIndication(id))));
        out.append(",\"subIndication\":").append(str(name(simple.getSubIndication(id))));
        out.append(",\"format\":").append(str(format == null ? null : format.toString()));
        out.append(",\"errors\":").append(messages(simple.getAdESValidationErrors(id)));
        out.append(",\"warnings\":").append(messages(simple.getAdESValidationWarnings(id)));
        out.append(",\"timestamps\":[");
        List<XmlTimestamp> stamps = simple.getSignatureTimestamps(id);
        for (int i = 0; stamps != null && i < stamps.size(); i++) {
          XmlTimestamp t = stamps.get(i);
          if (i > 0) out.append(',');
          out.append("{\"id\":").append(str(t.getId()));
          out.append(",\"indication\":").append(str(name(t.getIndication())));
          out.append(",\"subIndication\":").append(str(name(t.getSubIndication())));
          out.append(",\"productionTime\":").append(str(t.getProductionTime() == null ? null : t.getProductionTime().toInstant().toString()));
          out.append('}');
        }
        out.append("]}");
      }
      out.append("],\"timestamps\":[");
      first = true;
      for (String id : simple.getTimestampIdList()) {
        if (!first) out.append(',');
        first = false;
        out.append("{\"id\":").append(str(id));
        out.append(",\"indication\":").append(str(name(simple.getIndication(id))));
        out.append(",\"subIndication\":").append(str(name(simple.getSubIndication(id))));
        out.append(",\"errors\":").append(messages(simple.getAdESValidationErrors(id)));
        out.append('}');
      }
      out.append("]}");
      System.out.println(out);
    }
  }

  private static String name(Indication i) {
    return i == null ? null : i.name();
  }

  private static String name(SubIndication i) {
    return i == null ? null : i.name();
  }

  private static String messages(List<Message> list) {
    StringBuilder b = new StringBuilder("[");
    if (list != null) {
      for (int i = 0; i < list.size(); i++) {
        if (i > 0) b.append(',');
        b.append(str(list.get(i).getValue()));
      }
    }
    return b.append(']').toString();
  }

  private static String str(String s) {
    if (s == null) return "null";
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
          else b.append(c);
        }
      }
    }
    return b.append('"').toString();
  }
}
