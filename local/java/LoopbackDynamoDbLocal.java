import java.lang.reflect.Field;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

/**
 * DynamoDB Local on one address. The jar has no option for it and its Jetty
 * server listens on every interface, so this sets the connector's host before
 * starting it; the arguments are DynamoDB Local's own (-port, -inMemory, ...).
 */
public final class LoopbackDynamoDbLocal {
  public static void main(String[] args) throws Exception {
    String host = System.getProperty("dynamodb.local.host", "127.0.0.1");
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    int bound = 0;
    for (Connector connector : server.getConnectors()) {
      if (connector instanceof ServerConnector) {
        ((ServerConnector) connector).setHost(host);
        bound++;
      }
    }
    if (bound == 0) throw new IllegalStateException("DynamoDB Local has no connector to bind to " + host);
    proxy.start();
  }
}
